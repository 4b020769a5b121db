//! peers reads Kafka log images with Rust's record decoders, each as its users read a fetched
//! record set, and prints what each returned, for kafkacodec's peers report (python -m peers)
//! and fuzz runs (python -m peers.fuzz). The Rust twin of go/cmd/peers, speaking the same
//! protocol:
//!
//!     peers [-timeout SECONDS] [-parser NAME] FILE...   (or "-": file names on standard input)
//!
//! One JSON line per file and parser, printed as soon as it is known:
//!
//!     {"file": F, "parser": P, "records": [...], "error": "..."}   what the decoder returned
//!     {"file": F, "parser": P, "panic": "..."}                      the decoder panicked
//!     {"file": F, "parser": P, "hang": true}                        no answer within -timeout
//!
//! A record is {"offset", "timestamp" (ms; null when the format has none), "key", "value"
//! (hex; null for null), "headers": [[key, hex value or null]], "control": bool}.
//!
//! The parsers: `kafka-protocol` (RecordBatchDecoder::decode_all, what its own fetch tests
//! call on a partition's records), `rskafka` (the client's fetch path: Records::read of the
//! response's records, then PartitionClient's extract_records rules) and `kafkacodec-rust`
//! (the crate kafkacodec's schemas generate, rust/).

use bytes::Bytes;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

/// One record as a parser returned it, in the report's shape.
struct Rec {
    offset: i64,
    timestamp: Option<i64>,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
    control: bool,
}

impl Rec {
    fn json(&self) -> Value {
        let hex = |b: &Option<Vec<u8>>| b.as_deref().map(hex);
        json!({
            "offset": self.offset,
            "timestamp": self.timestamp,
            "key": hex(&self.key),
            "value": hex(&self.value),
            "headers": self.headers.iter().map(|(k, v)| json!([k, hex(v)])).collect::<Vec<_>>(),
            "control": self.control,
        })
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What a parser made of one image: its records, and its error (None when it gave none).
type Reading = (Vec<Rec>, Option<String>);

/// A parser: the bytes of one image in, its reading out.
type Parse = fn(&[u8]) -> Reading;

const PARSERS: &[(&str, Parse)] = &[
    ("kafka-protocol", kafka_protocol),
    ("rskafka", rskafka),
    ("kafkacodec-rust", kafkacodec_rust),
];

/// kafka-protocol: RecordBatchDecoder::decode_all over the partition's records, as the
/// crate's own fetch tests read a FetchResponse; its Record carries the offset, the
/// timestamp and the control flag a consumer reads. The crate is a codec, not a consumer:
/// what any consumer over it must do is done here, and nothing else: a record below the
/// consumer's position is left out (a fetch returns the batch holding the fetch offset from
/// its start), the position starting at the fetch offset (0 here, as Kafka's consumer judged
/// beside it) and moving past each record handed on (Kafka's CompletedFetch, in Java's long).
fn kafka_protocol(data: &[u8]) -> Reading {
    use kafka_protocol::records::RecordBatchDecoder;
    let mut buf = Bytes::copy_from_slice(data);
    match RecordBatchDecoder::decode_all(&mut buf) {
        Ok(sets) => {
            let recs = sets
                .into_iter()
                .flat_map(|s| s.records)
                .scan(0i64, |position, r| {
                    let kept = r.offset >= *position;
                    if kept {
                        *position = r.offset.wrapping_add(1);
                    }
                    Some(kept.then_some(r))
                })
                .flatten()
                .map(|r| Rec {
                    offset: r.offset,
                    timestamp: Some(r.timestamp),
                    key: r.key.map(|b| b.to_vec()),
                    value: r.value.map(|b| b.to_vec()),
                    headers: r
                        .headers
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v.map(|b| b.to_vec())))
                        .collect(),
                    control: r.control,
                })
                .collect();
            (recs, None)
        }
        Err(e) => (Vec::new(), Some(format!("{e:#}"))),
    }
}

/// rskafka: the client's fetch path. A Fetch response's records field is read by
/// Records::read (NULLABLE_BYTES: a batch cut at the end is dropped, as a fetch's last one
/// may be), then PartitionClient::fetch_records hands on what its extract_records keeps: a
/// control batch left out, records below the fetch offset (0 here, as Kafka's consumer
/// judged beside it) left out, the offset base + delta, the timestamp first_timestamp +
/// delta (checked, and a chrono time, else the whole fetch fails).
fn rskafka(data: &[u8]) -> Reading {
    use chrono::{LocalResult, TimeZone, Utc};
    use rskafka::protocol::primitives::Records;
    use rskafka::protocol::record::ControlBatchOrRecords;
    use rskafka::protocol::traits::ReadType;

    let Ok(len) = i32::try_from(data.len()) else {
        return (
            Vec::new(),
            Some("the records do not fit a NULLABLE_BYTES".into()),
        );
    };
    let mut framed = len.to_be_bytes().to_vec();
    framed.extend_from_slice(data);
    let batches = match Records::read(&mut std::io::Cursor::new(framed)) {
        Ok(r) => r.0,
        Err(e) => return (Vec::new(), Some(format!("{e}"))),
    };
    let request_offset = 0i64;
    let mut out = Vec::new();
    for batch in batches {
        let ControlBatchOrRecords::Records(records) = batch.records else {
            continue;
        };
        for r in records {
            // (rskafka's `+`: wraps in a release build, the build users ship)
            let offset = batch.base_offset.wrapping_add(i64::from(r.offset_delta));
            if offset < request_offset {
                continue;
            }
            let Some(ts) = batch.first_timestamp.checked_add(r.timestamp_delta) else {
                return (
                    Vec::new(),
                    Some(format!(
                        "Timestamp overflow (first_timestamp={}, delta={}",
                        batch.first_timestamp, r.timestamp_delta
                    )),
                );
            };
            let LocalResult::Single(t) = Utc.timestamp_millis_opt(ts) else {
                return (Vec::new(), Some(format!("Not a valid timestamp ({ts})")));
            };
            out.push(Rec {
                offset,
                timestamp: Some(t.timestamp_millis()),
                key: r.key,
                value: r.value,
                headers: r
                    .headers
                    .into_iter()
                    .map(|h| (h.key, Some(h.value)))
                    .collect(),
                control: false,
            });
        }
    }
    (out, None)
}

/// kafkacodec-rust: the crate kafkacodec's schemas generate (KafkaLog::parse, every CRC
/// checked, every region decompressed), its records made as kafkacodec's record layer makes
/// them (kafkacodec/records/batches.py, Kafka's rules; go/cmd/peers/kafkacodec.go the same
/// for the Go package): a v2 record's offset and timestamp from its batch's base and its
/// deltas (the batch's max timestamp for LogAppendTime), a legacy wrapper's inner messages
/// with AbstractLegacyRecordBatch's rules. The crate refuses a whole image at its first
/// error: no records then.
fn kafkacodec_rust(data: &[u8]) -> Reading {
    use kafkacodec::{Arena, KafkaLog, KafkaLogEntryBody};
    let arena = Arena::new();
    let log = match KafkaLog::parse(data, true, &arena) {
        Ok(log) => log,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let mut out = Vec::new();
    for entry in &log.entries {
        let result = match entry.body.as_deref() {
            Some(KafkaLogEntryBody::KafkaRecordBatch(b)) => v2_records(b, &mut out),
            Some(KafkaLogEntryBody::KafkaLegacyMessage(m)) => legacy_records(m, &mut out),
            _ => Ok(()),
        };
        if let Err(e) = result {
            return (out, Some(e));
        }
    }
    (out, None)
}

fn bytes_of(len: i64, b: Option<&[u8]>) -> Option<Vec<u8>> {
    (len >= 0).then(|| b.map_or_else(Vec::new, <[u8]>::to_vec))
}

fn v2_records(b: &kafkacodec::KafkaRecordBatch, out: &mut Vec<Rec>) -> Result<(), String> {
    let Some(region) = b.records_region.as_deref() else {
        return Ok(());
    };
    let control = b.is_control();
    for r in &region.records {
        if control {
            check_control(r)?;
        }
        out.push(Rec {
            offset: b.record_offset(r),
            timestamp: Some(b.record_timestamp(r)),
            key: bytes_of(r.len_key, r.key),
            value: bytes_of(r.len_value, r.value),
            headers: r
                .headers
                .iter()
                .map(|h| (h.key.to_string(), bytes_of(h.len_value, h.value)))
                .collect(),
            control,
        });
    }
    Ok(())
}

/// A control record's key (and an ABORT or COMMIT marker) as Kafka reads it
/// (ControlRecordType.parse, EndTransactionMarker.deserialize): the generated parsers of the
/// key and the marker over the bytes Kafka reads, bytes after them not looked at.
fn check_control(r: &kafkacodec::KafkaRecord) -> Result<(), String> {
    let key = match (r.key, r.len_key) {
        (Some(k), n) if n >= 0 => k,
        _ => return Err("a control record has a null key".into()),
    };
    if key.len() < 4 {
        return Err(format!(
            "a control record key of {} bytes, fewer than 4",
            key.len()
        ));
    }
    let k = kafkacodec::KafkaControlRecordKey::parse(&key[..4], true).map_err(|e| e.to_string())?;
    if k.r#type != 0 && k.r#type != 1 {
        return Ok(());
    }
    let value = match (r.value, r.len_value) {
        (Some(v), n) if n >= 0 => v,
        _ => return Err("an end transaction marker has a null value".into()),
    };
    if value.len() < 6 {
        return Err(format!(
            "an end transaction marker of {} bytes, fewer than 6",
            value.len()
        ));
    }
    kafkacodec::KafkaEndTxnMarker::parse(&value[..6], true).map_err(|e| e.to_string())?;
    Ok(())
}

fn legacy_record(m: &kafkacodec::KafkaLegacyMessage, offset: i64, timestamp: Option<i64>) -> Rec {
    Rec {
        offset,
        timestamp,
        key: bytes_of(m.len_key.into(), m.key),
        value: bytes_of(m.len_value.into(), m.value),
        headers: Vec::new(),
        control: false,
    }
}

/// A top-level legacy message's records, with AbstractLegacyRecordBatch's rules: one level
/// of compression, none empty, magic 1 offsets relative to the last unless the wrapper's is
/// 0, a LogAppendTime wrapper's timestamp.
fn legacy_records(w: &kafkacodec::KafkaLegacyMessage, out: &mut Vec<Rec>) -> Result<(), String> {
    use kafkacodec::{
        KAFKA_LEGACY_MESSAGE_COMPRESSION_TYPE_NONE as NONE,
        KAFKA_LEGACY_MESSAGE_TIMESTAMP_TYPE_LOG_APPEND_TIME,
    };
    if w.compression() == NONE {
        let ts = if w.magic != 0 { w.timestamp } else { None };
        out.push(legacy_record(w, w.offset, ts));
        return Ok(());
    }
    let Some(set) = w.inner.as_deref() else {
        return Err("a compressed wrapper has a null value".into());
    };
    let inner: Vec<&kafkacodec::KafkaLegacyMessage> = set
        .entries
        .iter()
        .filter_map(|e| e.message.as_deref())
        .collect();
    let Some(last) = inner.last() else {
        return Err("a compressed wrapper holds no inner records".into());
    };
    if inner.iter().any(|m| m.compression() != NONE) {
        return Err("a compressed message inside a compressed wrapper".into());
    }
    let mut base = 0i64;
    if w.magic >= 1 && w.offset != 0 {
        if w.offset < last.offset {
            return Err(format!(
                "wrapper offset {} is smaller than its last inner offset {}",
                w.offset, last.offset
            ));
        }
        base = w.offset - last.offset;
    }
    let log_append = w.timestamp_type() == KAFKA_LEGACY_MESSAGE_TIMESTAMP_TYPE_LOG_APPEND_TIME;
    let mut recs = Vec::with_capacity(inner.len());
    for m in &inner {
        let ts = (w.magic != 0).then_some(match (m.magic, log_append, w.timestamp, m.timestamp) {
            (0, ..) => -1,
            (1, true, Some(t), _) => t,
            (_, _, _, Some(t)) => t,
            _ => -1,
        });
        recs.push(legacy_record(m, base.wrapping_add(m.offset), ts));
    }
    out.append(&mut recs);
    Ok(())
}

thread_local! {
    /// Where the last panic on this thread happened (the panic hook's note).
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The parser on a thread of its own: a panic is caught and reported, a parser that does
/// not return in time is reported as hung (and left running).
fn run(parse: Parse, data: Vec<u8>, timeout: Duration) -> Value {
    let (send, recv) = mpsc::channel();
    std::thread::spawn(move || {
        let got = panic::catch_unwind(AssertUnwindSafe(|| parse(&data)));
        let answer = match got {
            Ok((recs, err)) => {
                let mut v = json!({"records": recs.iter().map(Rec::json).collect::<Vec<_>>()});
                if let Some(e) = err {
                    v["error"] = json!(e);
                }
                v
            }
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                let at = PANIC_AT.with(|p| p.borrow_mut().take()).unwrap_or_default();
                json!({"panic": format!("{msg}{at}")})
            }
        };
        let _ = send.send(answer);
    });
    recv.recv_timeout(timeout)
        .unwrap_or_else(|_| json!({"hang": true}))
}

fn answer(file: &str, only: Option<&str>, timeout: Duration, out: &mut impl Write) {
    let data = match std::fs::read(file) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(2);
        }
    };
    for (name, parse) in PARSERS {
        if only.is_some_and(|o| o != *name) {
            continue;
        }
        let mut v = run(*parse, data.clone(), timeout);
        v["file"] = json!(file);
        v["parser"] = json!(name);
        if writeln!(out, "{v}").and_then(|()| out.flush()).is_err() {
            std::process::exit(2);
        }
    }
}

fn main() {
    // a parser's panic (on its own thread, caught) is noted for its answer; one of this
    // program's own is told as Rust tells it
    let told = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("main") {
            return told(info);
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()));
        PANIC_AT.with(|p| *p.borrow_mut() = at);
    }));
    let mut args = std::env::args().skip(1).peekable();
    let (mut timeout, mut only, mut files) = (Duration::from_secs(10), None, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "-timeout" => {
                let v = args.next().unwrap_or_default();
                timeout = v
                    .trim_end_matches('s')
                    .parse()
                    .ok()
                    .and_then(|secs: f64| Duration::try_from_secs_f64(secs).ok())
                    .filter(|t| !t.is_zero())
                    .unwrap_or_else(|| {
                        eprintln!("peers: -timeout {v}: not a number of seconds above 0");
                        std::process::exit(2);
                    });
            }
            "-parser" => {
                let name = args.next().unwrap_or_default();
                if !PARSERS.iter().any(|(n, _)| *n == name) {
                    eprintln!("peers: -parser {name}: not one of kafka-protocol, rskafka, kafkacodec-rust");
                    std::process::exit(2);
                }
                only = Some(name);
            }
            _ => files.push(a),
        }
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if files.len() == 1 && files[0] == "-" {
        // each name answered as soon as it is read: a caller may keep one process and send
        // it one case at a time (peers.Session, the fuzz run's minimizer)
        for line in std::io::stdin().lock().lines() {
            let Ok(name) = line else { break };
            if !name.is_empty() {
                answer(&name, only.as_deref(), timeout, &mut out);
            }
        }
        return;
    }
    for f in &files {
        answer(f, only.as_deref(), timeout, &mut out);
    }
}
