meta:
  id: kafka_time_index
  title: Kafka time index (.timeindex file of a log segment)
  file-extension: timeindex
  license: Apache-2.0
  endian: be
doc: |
  A sparse map from timestamps to offsets. An entry records the largest timestamp seen so
  far in the segment and the last offset of the batch holding it; timestamps strictly
  increase from entry to entry. Preallocated and zero-filled while the segment is active.
doc-ref: org.apache.kafka.storage.internals.log.TimeIndex
seq:
  - id: entries
    type: entry
    repeat: eos
types:
  entry:
    seq:
      - id: timestamp
        type: s8
      - id: relative_offset
        -orig-id: relativeOffset
        type: s4
        doc: Offset minus the segment's base offset.
