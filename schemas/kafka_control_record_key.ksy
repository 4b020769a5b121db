meta:
  id: kafka_control_record_key
  title: Kafka control record key
  license: Apache-2.0
  endian: be
doc: |
  The key of a record in a control batch (attribute bit 5). Control records are never
  handed to an application as data. Unknown types must be reported, not rejected: later
  Kafka versions add new ones.
doc-ref: org.apache.kafka.common.record.ControlRecordType
seq:
  - id: version
    type: s2
    doc: Key schema version, 0; a negative version is invalid.
    valid:
      min: 0
  - id: type
    type: s2
    enum: control_record_type
    doc: The control type, an int16 as Kafka reads it (ControlRecordTypeSchema), so 0x8f00 is -28928.
enums:
  control_record_type:  # Kafka's ControlRecordType names (-orig-id)
    0:
      id: abort
      -orig-id: ABORT
    1:
      id: commit
      -orig-id: COMMIT
    2:
      id: leader_change
      -orig-id: LEADER_CHANGE
    3:
      id: snapshot_header
      -orig-id: SNAPSHOT_HEADER
    4:
      id: snapshot_footer
      -orig-id: SNAPSHOT_FOOTER
    5:
      id: kraft_version
      -orig-id: KRAFT_VERSION
    6:
      id: kraft_voters
      -orig-id: KRAFT_VOTERS
