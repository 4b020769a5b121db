meta:
  id: kafka_end_txn_marker
  title: Kafka end-transaction marker (control record value of ABORT and COMMIT)
  license: Apache-2.0
  endian: be
doc: |
  The value of an ABORT or COMMIT control record, written by the transaction coordinator
  into every partition of a finished transaction.
doc-ref: org.apache.kafka.common.record.EndTransactionMarker
seq:
  - id: version
    type: s2
    doc: Value schema version, 0; a negative version is invalid.
    valid:
      min: 0
  - id: coordinator_epoch
    -orig-id: coordinatorEpoch
    type: s4
