meta:
  id: kafka_legacy_message
  title: Kafka message set entry (message formats v0 and v1, magic 0 and 1)
  license: Apache-2.0
  endian: be
doc: |
  One entry of a legacy message set: an offset, a size and a message. A message set is a
  plain concatenation of entries. A compressed message is a wrapper: its key is null and
  its value holds the codec's compressed bytes of an inner message set of the same magic.
  The wrapper's offset is the offset of the last inner message; magic 1 inner messages
  carry relative offsets 0..n-1, magic 0 inner messages absolute ones.
doc-ref:
  - org.apache.kafka.common.record.LegacyRecord
  - https://kafka.apache.org/documentation/#messageset
seq:
  - id: offset
    type: s8
    doc: Logical offset; for a wrapper, the offset of its last inner message.
  - id: len_message
    -orig-id: messageSize
    type: s4
    doc: |
      Bytes of the message after this field. Never more than the input holds after it
      (`max`): a reader allocates no more than it was given.
    valid:
      min: 14
      max: _io.size - _io.pos
    -kafkacodec-length-of: rest
  - id: crc
    type: u4
    doc: CRC-32 (IEEE) of `magic` to the end of the value.
    -kafkacodec-crc:
      algorithm: crc32
      from: magic
  - id: magic
    type: s1
    doc: |
      0 or 1 (a log's walk refuses any other at its top level: kafka_log). Inside a wrapper
      Kafka reads any magic but 0 with magic 1's layout (LegacyRecord), and so does this.
    -kafkacodec-draw:
      any-of: [0, 1]
  - id: attributes
    type: s1
    doc: |
      Bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4), bit 3 timestamp type (magic 1
      only; LogAppendTime when set), bits 4-7 zero.
  - id: timestamp
    type: s8
    if: magic != 0
    doc: Milliseconds since the epoch, -1 for none; magic 1 only.
  - id: len_key
    -orig-id: keyLength
    type: s4
    valid:  # (the compiled readers allocate the length they read; null first, for C++)
      expr: _ < 0 or _ <= _io.size - _io.pos
    doc: -1 for a null key; Kafka reads any negative length as null (Utils.sizeDelimited).
  - id: key
    size: len_key
    if: len_key >= 0
  - id: len_value
    -orig-id: valueLength
    type: s4
    valid:  # (the compiled readers allocate the length they read; null first, for C++)
      expr: _ < 0 or _ <= _io.size - _io.pos
    doc: -1 for a null value (any negative length is null).
  - id: value
    size: len_value
    if: len_value >= 0 and compression == compression_type::none
    doc: The value of an uncompressed message.
  - id: inner
    size: len_value
    type: message_set
    process: kafka_compression(attributes & 7, magic)
    if: len_value >= 0 and compression != compression_type::none
    doc: The inner message set of a wrapper, stored compressed as the wrapper's value.
    -kafkacodec-lazy: true
  - id: unused
    size: 'len_message - (magic == 0 ? 14 : 22) - (len_key > 0 ? len_key : 0) - (len_value > 0 ? len_value : 0)'
    doc: |
      Bytes of the message after its value, which Kafka's LegacyRecord never reads (it
      reads each field where the message's layout puts it); no writer leaves any. Its size
      is negative, and the message refused, when the fields do not fit in the message.
    -kafkacodec-derive: '[]'
instances:
  crc_from:
    value: 16
    doc: |
      Where the bytes the CRC covers begin, counted from the message's first byte: at
      `magic` (the CRC field's `-kafkacodec-crc` says so; a test checks that this number
      is that field's offset). For other languages, whose parsers cannot compute a CRC:
      check CRC-32 over [crc_from, crc_to) of the message's bytes.
  crc_to:
    value: '(12 + len_message.as<s8>).as<s8>'
    doc: 'Where the bytes the CRC covers end (exclusive): the end of the message.'
  compression:
    value: attributes & 0x7
    enum: compression_type
  log_append_time_bit:
    value: (attributes >> 3) & 1
    doc: Attributes bit 3, LogAppendTime when set (magic 1; magic 0 has no timestamp type).
  timestamp_type:
    value: 'magic == 0 ? 0 : 1 + log_append_time_bit'
    enum: timestamp_type
types:
  message_set:
    doc: |
      Entries back to back, as in a wrapper's (decompressed) value. The set ends as Kafka's
      reader of a wrapper's inner messages ends it (AbstractLegacyRecordBatch's
      DataLogInputStream): at the end of the data, or at an entry that is not all there,
      which it drops; a length below 14 is corrupt; no magic is checked (see `magic`).
    doc-ref: org.apache.kafka.common.record.AbstractLegacyRecordBatch
    seq:
      - id: entries
        type: inner_entry
        repeat: eos
  inner_entry:
    doc: One message of a wrapper's inner set, or the partial entry that ends the set.
    seq:
      - id: partial
        size-eos: true
        if: '_io.size - _io.pos < 12 or (length >= 14 and _io.size - _io.pos - 12 < length)'
        -kafkacodec-draw: absent
        doc: |
          A trailing entry that is not all there: its bytes, which Kafka drops unread
          (fewer than 12 bytes, or fewer than its length says).
      - id: message
        type: kafka_legacy_message
        if: _io.pos < _io.size
        doc: The message, when it is all there.
    instances:
      length:
        pos: _io.pos + 8
        type: s4
        valid:
          min: 14
          max: 2147483639
        doc: |
          The entry's length field, read ahead to tell a whole entry from a partial one;
          below 14 Kafka calls the set corrupt ("Record size is less than the minimum
          record overhead"), above 2147483639 (Integer.MAX_VALUE - 8, the largest array a
          JVM makes) invalid (Kafka 4.4's DataLogInputStream.nextBatch, maxRecordBodySize:
          "Invalid record size: N exceeds the configured maximum record size of
          2147483639"; Kafka 4.0 sets out to allocate it, and runs out of heap).
enums:
  compression_type:
    0: none
    1: gzip
    2: snappy
    3: lz4
  timestamp_type:  # Kafka's TimestampType names (-orig-id)
    0:
      id: no_timestamp_type
      -orig-id: NoTimestampType
    1:
      id: create_time
      -orig-id: CreateTime
    2:
      id: log_append_time
      -orig-id: LogAppendTime
