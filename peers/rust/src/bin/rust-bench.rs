//! rust-bench times kafkacodec's Rust crate against the kafka-protocol crate over the same
//! log segment, for bench/languages.py (beside go/cmd/kafkacodec-bench, which times the Go
//! package and franz-go over it):
//!
//!     rust-bench [-repeat N] [-only SIDE] SEGMENT
//!
//! Each side checks every batch's CRC and reads every field of every record (offset,
//! timestamp, key, value, headers), summed into a checksum every side (and the Go
//! program's) must give:
//!   - kafkacodec: KafkaLog::parse(data, verify=true, arena), the whole log held as one
//!     value, then a walk of its batches;
//!   - kafkacodec-reader: KafkaLog::reader(data, true), one entry at a time (an arena each),
//!     as a program reads a segment too big to hold;
//!   - kafka-protocol: RecordBatchDecoder::decode_all, then a walk of its records.
//!
//! The sides run in turn after a warm-up round; the output is one JSON object with each
//! side's median records per second, the records and the checksum. -only times one side
//! alone (under a profiler).

use bytes::Bytes;
use kafkacodec::{Arena, KafkaLog, KafkaLogEntryBody};
use std::time::Instant;

type Walk = (i64, i64);

/// A side of the run: its reading of the segment.
type Side<'s> = &'s dyn Fn() -> Result<Walk, String>;

/// A v2 batch's records into the walk (legacy entries hold none in these segments).
fn add_batch(body: Option<&KafkaLogEntryBody<'_>>, walk: &mut Walk) {
    let Some(KafkaLogEntryBody::KafkaRecordBatch(b)) = body else {
        return;
    };
    let Some(region) = b.records_region.as_deref() else {
        return;
    };
    let (records, sum) = walk;
    for r in &region.records {
        let kv = r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len);
        *sum = sum
            .wrapping_add(b.record_offset(r))
            .wrapping_add(b.record_timestamp(r))
            .wrapping_add(kv as i64);
        for h in &r.headers {
            *sum = sum.wrapping_add((h.key.len() + h.value.map_or(0, <[u8]>::len)) as i64);
        }
        *records += 1;
    }
}

fn via_kafkacodec(data: &[u8]) -> Result<Walk, String> {
    let arena = Arena::new();
    let log = KafkaLog::parse(data, true, &arena).map_err(|e| e.to_string())?;
    let mut walk = (0, 0);
    for e in &log.entries {
        add_batch(e.body.as_deref(), &mut walk);
    }
    Ok(walk)
}

fn via_kafkacodec_reader(data: &[u8]) -> Result<Walk, String> {
    let mut entries = KafkaLog::reader(data, true);
    let mut walk = (0, 0);
    loop {
        let arena = Arena::new();
        let Some(entry) = entries.next_in(&arena) else {
            return Ok(walk);
        };
        add_batch(entry.map_err(|e| e.to_string())?.body.as_deref(), &mut walk);
    }
}

fn via_kafka_protocol(data: &Bytes) -> Result<Walk, String> {
    use kafka_protocol::records::RecordBatchDecoder;
    let mut buf = data.clone();
    let sets = RecordBatchDecoder::decode_all(&mut buf).map_err(|e| format!("{e:#}"))?;
    let (mut records, mut sum) = (0i64, 0i64);
    for set in &sets {
        for r in &set.records {
            let kv =
                r.key.as_ref().map_or(0, |k| k.len()) + r.value.as_ref().map_or(0, |v| v.len());
            sum = sum
                .wrapping_add(r.offset)
                .wrapping_add(r.timestamp)
                .wrapping_add(kv as i64);
            for (k, v) in &r.headers {
                sum = sum.wrapping_add((k.len() + v.as_ref().map_or(0, |v| v.len())) as i64);
            }
            records += 1;
        }
    }
    Ok((records, sum))
}

/// The sides, in the order they run (and -only names them).
const SIDES: [&str; 3] = ["kafkacodec", "kafkacodec-reader", "kafka-protocol"];

fn usage(what: &str) -> ! {
    eprintln!("rust-bench: {what}\nusage: rust-bench [-repeat N] [-only SIDE] SEGMENT");
    std::process::exit(2);
}

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(|a, b| a.total_cmp(b));
    rates[rates.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut repeat, mut only, mut path) = (5usize, None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-repeat" => match args
                .next()
                .and_then(|n| n.parse().ok())
                .filter(|&n: &usize| n > 0)
            {
                Some(n) => repeat = n,
                None => usage("-repeat takes a number of runs, 1 or more"),
            },
            "-only" => match args.next() {
                Some(side) if SIDES.contains(&side.as_str()) => only = Some(side),
                side => usage(&format!(
                    "-only {}: not one of {}",
                    side.unwrap_or_default(),
                    SIDES.join(", ")
                )),
            },
            _ if path.is_none() => path = Some(a),
            _ => usage(&format!("{a}: one segment only")),
        }
    }
    let Some(path) = path else {
        usage("a segment to read");
    };
    let data = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let shared = Bytes::from(data.clone());
    let sides: [(&str, Side); 3] = [
        (SIDES[0], &|| via_kafkacodec(&data)),
        (SIDES[1], &|| via_kafkacodec_reader(&data)),
        (SIDES[2], &|| via_kafka_protocol(&shared)),
    ];
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    let mut walks = vec![None; sides.len()];
    for round in 0..=repeat.max(1) {
        for (i, (name, side)) in sides.iter().enumerate() {
            if only.as_deref().is_some_and(|o| o != *name) {
                continue;
            }
            let t = Instant::now();
            let walk = side().unwrap_or_else(|e| {
                eprintln!("{path}: {name}: {e}");
                std::process::exit(1);
            });
            if round > 0 {
                // (round 0 warms the caches and the allocator up)
                rates[i].push(walk.0 as f64 / t.elapsed().as_secs_f64());
            }
            walks[i] = Some(walk);
        }
    }
    let read: Vec<Walk> = walks.iter().flatten().copied().collect();
    if read.windows(2).any(|w| w[0] != w[1]) {
        eprintln!("{path}: the sides read other records (records, checksum): {walks:?}");
        std::process::exit(1);
    }
    let mut out = String::from("{");
    for ((name, _), r) in sides.iter().zip(rates) {
        if !r.is_empty() {
            out += &format!("\"{name}\": {:.0}, ", median(r));
        }
    }
    let (records, sum) = read.first().copied().unwrap_or_default();
    println!("{out}\"records\": {records}, \"checksum\": {sum}}}");
}
