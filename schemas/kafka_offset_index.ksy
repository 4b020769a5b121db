meta:
  id: kafka_offset_index
  title: Kafka offset index (.index file of a log segment)
  file-extension: index
  license: Apache-2.0
  endian: be
doc: |
  A sparse map from offsets to byte positions in the segment's .log file. Entries are
  appended when more than index.interval.bytes were written since the last one. While a
  segment is active the file is preallocated and zero-filled past its last entry; an entry
  equal to (0, 0) after the first one marks that end.
doc-ref: org.apache.kafka.storage.internals.log.OffsetIndex
seq:
  - id: entries
    type: entry
    repeat: eos
types:
  entry:
    seq:
      - id: relative_offset
        -orig-id: relativeOffset
        type: s4
        doc: Offset minus the segment's base offset.
      - id: position
        type: s4
        doc: Byte position of the batch in the .log file.
