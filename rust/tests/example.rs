//! The crate as a user reads a log segment (or a fetched record set): its batches, their
//! CRCs checked and their records decompressed. docs/languages.md shows this file.

use kafkacodec::{Arena, KafkaLog, KafkaLogEntryBody};

#[test]
fn read_a_log_segment() -> Result<(), Box<dyn std::error::Error>> {
    let data = std::fs::read("../tests/vectors/kafka-java/v2/v2_gzip_basic.bin")?;
    // the parsed log borrows the bytes; a decompressed region is kept in the arena
    let arena = Arena::new();
    let log = KafkaLog::parse(&data, true, &arena)?;
    let mut lines = Vec::new();
    for entry in &log.entries {
        // a legacy message (magic 0 or 1), or the partial entry that ends a log, is another case
        let Some(KafkaLogEntryBody::KafkaRecordBatch(batch)) = entry.body.as_deref() else {
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
            let key = String::from_utf8_lossy(r.key.unwrap_or_default());
            let value = String::from_utf8_lossy(r.value.unwrap_or_default());
            // the offset and timestamp a consumer sees (LogAppendTime: the batch's)
            lines.push(format!(
                "{} {} {key:?} {value:?}",
                batch.record_offset(r),
                batch.record_timestamp(r)
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
fn read_a_big_segment_one_entry_at_a_time() -> Result<(), Box<dyn std::error::Error>> {
    let data = std::fs::read("../tests/vectors/kafka-java/v2/v2_none_1000_small.bin")?;
    let mut entries = KafkaLog::reader(&data, true);
    let (mut batches, mut records) = (0, 0);
    loop {
        // an arena per entry: its decompressed region goes with it
        let arena = Arena::new();
        let Some(entry) = entries.next_in(&arena) else {
            break;
        };
        if let Some(KafkaLogEntryBody::KafkaRecordBatch(batch)) = entry?.body.as_deref() {
            batches += 1;
            records += batch
                .records_region
                .as_deref()
                .map_or(0, |r| r.records.len());
        }
    }
    assert_eq!((batches, records), (1, 1000));
    assert_eq!(entries.position(), data.len());
    Ok(())
}

#[test]
fn bad_input_is_an_error_that_names_the_byte() {
    let mut data =
        std::fs::read("../tests/vectors/kafka-java/v2/v2_gzip_basic.bin").expect("the vector");
    data[30] ^= 0xff; // inside the CRC-covered attributes
    let arena = Arena::new();
    let err = KafkaLog::parse(&data, true, &arena).expect_err("a CRC mismatch");
    assert_eq!(err.check, kafkacodec::Check::Checksum);
    assert!(err.to_string().starts_with("byte 0: CRC mismatch"), "{err}");
}
