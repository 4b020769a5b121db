//! kafkacodec-bench times the generated Rust parser over a log segment, for
//! bench/languages.py (beside go/cmd/kafkacodec-bench, which times the Go package and
//! franz-go over the same segment):
//!
//!     kafkacodec-bench [-repeat N] SEGMENT
//!
//! Every batch's CRC is checked and every field of every record read (offset, timestamp,
//! key, value, headers), summed into a checksum the Go program's must equal. The output is
//! one JSON object: the median records per second, the records and the checksum.

use bytes::Bytes;
use kafkacodec::{KafkaLog, KafkaLogEntryBody};
use std::time::Instant;

fn walk(data: &Bytes) -> Result<(i64, i64), kafkacodec::Error> {
    let log = KafkaLog::parse(data, true)?;
    let (mut records, mut sum) = (0i64, 0i64);
    for e in &log.entries {
        let Some(KafkaLogEntryBody::KafkaRecordBatch(b)) = e.body.as_deref() else {
            continue;
        };
        let Some(region) = b.records_region.as_deref() else {
            continue;
        };
        let log_append = b.timestamp_type() == 1;
        for r in &region.records {
            let ts = if log_append {
                b.max_timestamp
            } else {
                b.base_timestamp.wrapping_add(r.timestamp_delta)
            };
            let key = r.key.as_ref().map_or(0, |k| k.len()) as i64;
            let value = r.value.as_ref().map_or(0, |v| v.len()) as i64;
            sum = sum
                .wrapping_add(b.base_offset.wrapping_add(r.offset_delta))
                .wrapping_add(ts)
                .wrapping_add(key + value);
            for h in &r.headers {
                sum = sum
                    .wrapping_add((h.key.len() + h.value.as_ref().map_or(0, |v| v.len())) as i64);
            }
            records += 1;
        }
    }
    Ok((records, sum))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (repeat, path) = match args.as_slice() {
        [flag, n, path] if flag == "-repeat" => (n.parse().unwrap_or(5), path.clone()),
        [path] => (5usize, path.clone()),
        _ => {
            eprintln!("usage: kafkacodec-bench [-repeat N] SEGMENT");
            std::process::exit(2);
        }
    };
    let data = match std::fs::read(&path) {
        Ok(d) => Bytes::from(d),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let mut rates = Vec::new();
    let (mut records, mut sum) = (0, 0);
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        match walk(&data) {
            Ok((n, s)) => (records, sum) = (n, s),
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        }
        rates.push(records as f64 / t.elapsed().as_secs_f64());
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{{\"kafkacodec\": {:.0}, \"records\": {records}, \"checksum\": {sum}}}",
        rates[rates.len() / 2]
    );
}
