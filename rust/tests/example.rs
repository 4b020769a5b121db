//! The crate as a user reads a log segment (or a fetched record set): its batches, their
//! CRCs checked and their records decompressed. docs/languages.md shows this file.

use bytes::Bytes;
use kafkacodec::{KafkaLog, KafkaLogEntryBody};

#[test]
fn read_a_log_segment() -> Result<(), Box<dyn std::error::Error>> {
    let data = Bytes::from(std::fs::read(
        "../tests/vectors/kafka-java/v2/v2_gzip_basic.bin",
    )?);
    let log = KafkaLog::parse(&data, true)?;
    let mut lines = Vec::new();
    for entry in &log.entries {
        // a legacy message (magic 0 or 1), or the partial entry that ends a log, is another case
        let Some(body) = entry.body.as_deref() else {
            continue;
        };
        let KafkaLogEntryBody::KafkaRecordBatch(batch) = body else {
            continue;
        };
        let records = &batch
            .records_region
            .as_deref()
            .expect("read with the batch")
            .records;
        lines.push(format!(
            "codec {} records {}",
            batch.attributes & 7,
            records.len()
        ));
        for r in records.iter().take(2) {
            let key = String::from_utf8_lossy(r.key.as_deref().unwrap_or_default()).into_owned();
            let value =
                String::from_utf8_lossy(r.value.as_deref().unwrap_or_default()).into_owned();
            lines.push(format!(
                "{} {} {key:?} {value:?}",
                batch.base_offset + r.offset_delta,
                batch.base_timestamp + r.timestamp_delta
            ));
        }
    }
    assert_eq!(
        lines,
        [
            "codec 1 records 3",
            "0 1700000000000 \"k1\" \"v1\"",
            "1 1700000000010 \"key-2\" \"value-two\""
        ]
    );
    Ok(())
}

#[test]
fn bad_input_is_an_error_that_names_the_byte() {
    let mut data =
        std::fs::read("../tests/vectors/kafka-java/v2/v2_gzip_basic.bin").expect("the vector");
    data[30] ^= 0xff; // inside the CRC-covered attributes
    let err = KafkaLog::parse(&Bytes::from(data), true).expect_err("a CRC mismatch");
    assert_eq!(err.check, kafkacodec::Check::Checksum);
    assert!(err.to_string().starts_with("byte 0: CRC mismatch"), "{err}");
}
