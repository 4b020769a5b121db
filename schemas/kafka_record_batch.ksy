meta:
  id: kafka_record_batch
  title: Kafka record batch (message format v2, magic 2, Kafka 0.11+)
  license: Apache-2.0
  endian: be
  imports:
    - kafka_record
doc: |
  A batch of records as Kafka stores it in a log segment and sends it on the wire. The
  header is 61 bytes; its CRC-32C covers everything from `attributes` to the end of the
  batch, so that a broker may rewrite `partition_leader_epoch` without recomputing it.
  When the codec in `attributes` is not none, the records are compressed as ONE stream.
  A batch may hold zero records after compaction; its offsets and sequences are then still
  those of the original batch.
doc-ref:
  - org.apache.kafka.common.record.DefaultRecordBatch
  - https://kafka.apache.org/documentation/#recordbatch
seq:
  - id: base_offset
    -orig-id: baseOffset
    type: s8
    doc: Offset of the first record.
  - id: len_batch
    -orig-id: batchLength
    type: s4
    doc: Bytes of the batch after this field (the whole batch is 12 bytes longer).
    valid:
      min: 49
    -kafkacodec-length-of: rest
  - id: partition_leader_epoch
    -orig-id: partitionLeaderEpoch
    type: s4
  - id: magic
    type: s1
    valid: 2
  - id: crc
    type: u4
    doc: CRC-32C (Castagnoli) of `attributes` to the end of the batch.
    -kafkacodec-crc:
      algorithm: crc32c
      from: attributes
  - id: attributes
    type: s2
    doc: |
      Bits 0-2 codec, bit 3 timestamp type (LogAppendTime when set), bit 4 transactional,
      bit 5 control, bit 6 has delete horizon (KIP-534), bits 7-15 zero.
  - id: last_offset_delta
    -orig-id: lastOffsetDelta
    type: s4
    doc: Offset of the last record minus base_offset.
  - id: base_timestamp
    -orig-id: baseTimestamp
    type: s8
    doc: |
      Timestamp of the first record ("firstTimestamp"); the delete horizon instead when
      has_delete_horizon is set.
  - id: max_timestamp
    -orig-id: maxTimestamp
    type: s8
  - id: producer_id
    -orig-id: producerId
    type: s8
    doc: -1 when there is no producer id.
  - id: producer_epoch
    -orig-id: producerEpoch
    type: s2
    doc: -1 when there is no producer epoch.
  - id: base_sequence
    -orig-id: baseSequence
    type: s4
    doc: Sequence number of the first record, -1 when none.
  - id: num_records
    -orig-id: recordsCount
    type: s4
    valid:
      min: 0
    -kafkacodec-derive: records_region.records.size
  - id: records_region
    -orig-id: records
    size: len_batch - 49
    type: record_list(num_records)
    process: kafka_compression(attributes & 7, 2, num_records)
    doc: |
      The records, compressed as one stream when the codec is not none. They take every
      byte of the region (`valid`): bytes after the last record are corrupt ("Incorrect
      declared batch size, records still remaining in file", DefaultRecordBatch's
      iterators; a compressed stream's own end is its codec's). A batch of no record is
      read no further than its codec's head, whatever its region holds: the process's
      third argument (DefaultRecordBatch's iterators return no record at once, the
      streaming one after opening the codec's stream, whose constructor reads the gzip
      member header, the LZ4 frame header, snappy-java's header or, without it, the one raw
      block; zstd-jni reads nothing).
    valid:
      expr: _._io.pos == _._io.size
    -kafkacodec-lazy: true
instances:
  crc_from:
    value: 21
    doc: |
      Where the bytes the CRC covers begin, counted from the batch's first byte: at
      `attributes` (the CRC field's `-kafkacodec-crc` says so; a test checks that this
      number is that field's offset). For other languages, whose parsers cannot compute a
      CRC: check CRC-32C over [crc_from, crc_to) of the batch's bytes.
  crc_to:
    value: '(12 + len_batch.as<s8>).as<s8>'
    doc: 'Where the bytes the CRC covers end (exclusive): the end of the batch.'
  compression:
    value: attributes & 0x7
    enum: compression_type
    doc: The codec of the records region.
  timestamp_type:
    value: (attributes >> 3) & 1
    enum: timestamp_type
  is_transactional:
    value: (attributes & 0x10) != 0
  is_control:
    value: (attributes & 0x20) != 0
    doc: Whether the batch holds control records (transaction markers and the like).
  has_delete_horizon:
    value: (attributes & 0x40) != 0
  last_offset:
    value: '(base_offset + last_offset_delta).as<s8>'
types:
  record_list:
    doc: The (decompressed) records of a batch.
    params:
      - id: num_records
        type: s4
    seq:
      - id: records
        type: kafka_record
        repeat: expr
        repeat-expr: num_records
enums:
  compression_type:
    0: none
    1: gzip
    2: snappy
    3: lz4
    4: zstd
  timestamp_type:  # Kafka's TimestampType names (-orig-id)
    0:
      id: create_time
      -orig-id: CreateTime
    1:
      id: log_append_time
      -orig-id: LogAppendTime
