meta:
  id: kafka_txn_index
  title: Kafka transaction index (.txnindex file of a log segment)
  file-extension: txnindex
  license: Apache-2.0
  endian: be
doc: One entry per aborted transaction whose marker lies in the segment.
doc-ref: org.apache.kafka.storage.internals.log.TransactionIndex
seq:
  - id: entries
    type: entry
    repeat: eos
types:
  entry:
    doc-ref: org.apache.kafka.storage.internals.log.AbortedTxn
    seq:
      - id: version
        type: s2
        valid: 0
      - id: producer_id
        -orig-id: producerId
        type: s8
      - id: first_offset
        -orig-id: firstOffset
        type: s8
      - id: last_offset
        -orig-id: lastOffset
        type: s8
      - id: last_stable_offset
        -orig-id: lastStableOffset
        type: s8
