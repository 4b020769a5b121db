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
    type: u2
    enum: control_record_type
enums:
  control_record_type:
    0: abort
    1: commit
    2: leader_change
    3: snapshot_header
    4: snapshot_footer
    5: kraft_version
    6: kraft_voters
