meta:
  id: kafka07_message
  title: Kafka 0.7 message (.kafka segment files)
  file-extension: kafka
  license: Apache-2.0
  endian: be
doc: |
  The oldest on-disk layout (Kafka 0.7 and before). A partition is a series of files named
  `<20 digits>.kafka`; a message's offset is its byte position in the partition. Magic 0
  has no attributes byte; magic 1 adds one whose bits 0-1 select the codec (1 gzip,
  2 snappy), in which case the payload is a compressed series of such messages.
doc-ref: kafka.message.Message (Kafka 0.7)
seq:
  - id: len_message
    -orig-id: length
    type: s4
    doc: Bytes of the message after this field.
    valid:
      min: 5
    -kafkacodec-length-of: rest
  - id: magic
    type: s1
    valid:
      any-of: [0, 1]
  - id: attributes
    type: s1
    if: magic == 1
  - id: crc
    type: u4
    doc: CRC-32 (IEEE) of the payload.
    -kafkacodec-crc:
      algorithm: crc32
      from: payload
  - id: payload
    size: 'len_message - (magic == 1 ? 6 : 5)'
instances:
  crc_from:
    value: 'magic == 1 ? 10 : 9'
    doc: |
      Where the bytes the CRC covers begin, counted from the message's first byte: at
      `payload` (the CRC field's `-kafkacodec-crc` says so; a test checks it against the
      parser's). For other languages, whose parsers cannot compute a CRC: check CRC-32 over
      [crc_from, crc_to) of the message's bytes.
  crc_to:
    value: '(4 + len_message.as<s8>).as<s8>'
    doc: 'Where the bytes the CRC covers end (exclusive): the end of the message.'
  compression:
    value: 'magic == 1 ? attributes & 0x3 : 0'
    enum: compression_type
enums:
  compression_type:
    0: none
    1: gzip
    2: snappy
