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
  (A fetch response may end with a partial entry; a reader stops before it.)
doc-ref: org.apache.kafka.common.record.FileRecords
seq:
  - id: entries
    type: entry
    repeat: eos
types:
  entry:
    doc: One batch (magic 2) or one top-level message (magic 0 or 1).
    seq:
      - id: body
        type:
          switch-on: magic
          cases:
            0: kafka_legacy_message
            1: kafka_legacy_message
            2: kafka_record_batch
    instances:
      magic:
        pos: _io.pos + 16
        type: s1
        valid:
          any-of: [0, 1, 2]
        doc: |
          The magic byte, at the same place in every format. Checked, so that an unknown
          magic stops every target's parser (a switch without a case reads nothing, and
          `repeat: eos` would then loop forever).
