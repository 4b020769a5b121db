meta:
  id: kafka_record
  title: Kafka record (message format v2, inside a record batch)
  license: Apache-2.0
  endian: be
  imports:
    - common/zigzag_varint
doc: |
  One record of a v2 record batch. Lengths, deltas and counts are zig-zag varints; the
  offset and timestamp of a record are deltas from its batch's base offset and base
  timestamp. A length of -1 stands for null (key, value, header value), as does any other
  negative length when Kafka reads one; a header key is never null.
doc-ref: org.apache.kafka.common.record.DefaultRecord
-kafkacodec-columns: true
seq:
  - id: len_body
    -orig-id: length
    type: zigzag_varint(5)
    doc: |
      Bytes of the record after this field: never negative, nor more than the input holds
      after it (`valid`: a reader allocates no more than it was given; Kafka: "Invalid
      record size").
    valid:
      expr: _.value >= 0 and _.value <= _io.size - _io.pos
  - id: body
    size: len_body.value
    type: body
    doc: |
      The record's fields, read within its length: a field that reaches past it, or bytes
      it leaves unread (`valid`), make the record corrupt, as Kafka's DefaultRecord.readFrom
      says ("Invalid record size: expected to read N bytes in record payload, but instead
      read M"). kafkacodec's parsers give these fields to the record itself
      (-kafkacodec-inline); the official compiler's outputs read them as `body`.
    valid:
      expr: _._io.pos == _._io.size
    -kafkacodec-inline: true
types:
  body:
    doc: What a record's length counts, from its attributes to its headers.
    seq:
      - id: attributes
        type: s1
        doc: Unused; always 0.
      - id: timestamp_delta
        -orig-id: timestampDelta
        type: zigzag_varint(10)
        doc: Timestamp minus the batch's base timestamp (a varlong).
      - id: offset_delta
        -orig-id: offsetDelta
        type: zigzag_varint(5)
        doc: Offset minus the batch's base offset.
      - id: len_key
        -orig-id: keyLength
        type: zigzag_varint(5)
        doc: |
          Key length in bytes, -1 for a null key. Kafka reads any negative length as null
          (Utils.readBytes), so every reader here does. Never more than the record holds after
          it (`valid`): the compiled readers allocate the length they read.
        valid:
          expr: _.value < 0 or _.value <= _io.size - _io.pos
      - id: key
        size: len_key.value
        if: len_key.value >= 0
      - id: len_value
        -orig-id: valueLen
        type: zigzag_varint(5)
        doc: Value length in bytes, -1 for a null value (any negative length is null).
        valid:
          expr: _.value < 0 or _.value <= _io.size - _io.pos
      - id: value
        size: len_value.value
        if: len_value.value >= 0
      - id: num_headers
        -orig-id: headersCount
        type: zigzag_varint(5)
        doc: |
          Never negative, nor more than the bytes after it (a header takes two at least): a
          count past them cannot be read.
        valid:
          expr: _.value >= 0 and _.value <= _io.size - _io.pos
      - id: headers
        type: header
        repeat: expr
        repeat-expr: num_headers.value
  header:
    doc: A record header; keys may repeat and keep their order.
    doc-ref: org.apache.kafka.common.header.internals.RecordHeader
    seq:
      - id: len_key
        -orig-id: headerKeyLength
        type: zigzag_varint(5)
        doc: Key length in bytes; never negative, nor more than the bytes after it.
        valid:
          expr: _.value >= 0 and _.value <= _io.size - _io.pos
      - id: key
        type: str
        encoding: UTF-8
        size: len_key.value
      - id: len_value
        -orig-id: headerValueLength
        type: zigzag_varint(5)
        doc: Value length in bytes, -1 for a null value (any negative length is null).
        valid:
          expr: _.value < 0 or _.value <= _io.size - _io.pos
      - id: value
        size: len_value.value
        if: len_value.value >= 0
