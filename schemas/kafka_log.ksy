meta:
  id: kafka_log
  title: Kafka log segment (.log file) or record set of any message format
  file-extension: log
  license: Apache-2.0
  endian: be
  imports:
    - kafka_legacy_message
    - kafka_record_batch
doc: |
  Entries back to back, each a v2 record batch or a legacy message set entry, as in a log
  segment or the records field of a fetch response. Every entry starts with an int64
  offset and an int32 length; the magic byte at byte 16 of the entry tells the format.

  The log ends as Kafka's reader of a record buffer ends it (ByteBufferLogInputStream's
  nextBatch and nextBatchSize): at the end of the data, or at a trailing entry that is
  not all there, which a segment being written, a torn tail after a crash, or the last
  batch of a fetch response always is. That entry is kept as its `partial` bytes, unread.
  In Kafka's order: fewer than 12 bytes left ends the log; else a length below 14 (the
  smallest legacy message) is corrupt; fewer than 17 bytes left ends the log; else a magic
  byte other than 0, 1 or 2 is corrupt; fewer bytes left than the length says ends the
  log; else the entry is read.
doc-ref:
  - org.apache.kafka.common.record.ByteBufferLogInputStream
  - org.apache.kafka.common.record.FileRecords
seq:
  - id: entries
    type: entry
    repeat: eos
types:
  entry:
    doc: One batch (magic 2) or one top-level message (magic 0 or 1), or the partial entry that ends the log.
    seq:
      - id: partial
        size-eos: true
        if: '_io.size - _io.pos < 12 or (length >= 14 and (_io.size - _io.pos < 17 or (magic >= 0 and _io.size - _io.pos - 12 < length)))'
        -kafkacodec-draw: absent
        doc: |
          A trailing entry that is not all there: its bytes, unread. The condition is
          Kafka's, taken where the entry starts; it names `length` and `magic` where Kafka
          checks them, so that their `valid` refuses a corrupt one in every target (Kaitai
          reads an instance when an expression first needs it).
      - id: body
        type:
          switch-on: magic
          cases:
            0: kafka_legacy_message
            1: kafka_legacy_message
            2: kafka_record_batch
        if: _io.pos < _io.size
        doc: The entry, when it is all there (a partial entry takes every byte left).
    instances:
      length:
        pos: _io.pos + 8
        type: s4
        valid:
          min: 14
        doc: |
          The entry's length field (bytes after it), read ahead to tell a whole entry from
          a partial one. Below 14, the size of the smallest legacy message, Kafka calls the
          data corrupt (LegacyRecord.RECORD_OVERHEAD_V0).
      magic:
        pos: _io.pos + 16
        type: s1
        valid:
          any-of: [0, 1, 2]
        doc: |
          The magic byte, at the same place in every format ("Invalid magic found in
          record" otherwise). Checked, so that an unknown magic stops every target's parser
          (a switch without a case reads nothing, and `repeat: eos` would then loop forever).
