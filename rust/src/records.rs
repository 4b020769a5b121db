//! What a record's offset and timestamp are, from its batch's fields and its deltas, as Kafka
//! reads them (DefaultRecordBatch and DefaultRecord; kafkacodec/records/batches.py the same in
//! Python): the schemas keep the deltas, these give the values a consumer sees.

use crate::gen::{
    KafkaRecord, KafkaRecordBatch, KAFKA_RECORD_BATCH_TIMESTAMP_TYPE_LOG_APPEND_TIME,
};

impl KafkaRecordBatch<'_> {
    /// The record's offset: the batch's base offset plus the record's delta, in Java's long
    /// arithmetic (DefaultRecord: `baseOffset + offsetDelta`, wrapping).
    pub fn record_offset(&self, r: &KafkaRecord<'_>) -> i64 {
        self.base_offset.wrapping_add(r.offset_delta)
    }

    /// The record's timestamp: the batch's max timestamp when the broker set LogAppendTime
    /// (DefaultRecordBatch's iterator hands every record that), else the base timestamp plus
    /// the record's delta, in Java's long arithmetic.
    pub fn record_timestamp(&self, r: &KafkaRecord<'_>) -> i64 {
        if self.timestamp_type() == KAFKA_RECORD_BATCH_TIMESTAMP_TYPE_LOG_APPEND_TIME {
            self.max_timestamp
        } else {
            self.base_timestamp.wrapping_add(r.timestamp_delta)
        }
    }
}
