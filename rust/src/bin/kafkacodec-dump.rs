//! kafkacodec-dump reads files with the generated Rust parsers and prints what each holds as
//! a tree of its stored fields, for the cross-language tests (tests/crosslang):
//!
//!     kafkacodec-dump [-no-crc] JOBS
//!     kafkacodec-dump -codecs < CASES
//!
//! JOBS has one line per input, CLASS<TAB>PARAM<TAB>OFFSET<TAB>PATH: the type (its Rust name,
//! or the Java binary name KafkaLog$Entry), its parameter or "-", and where in the file the
//! value starts (it runs to the end). One JSON line per job: {"ok": TREE} or {"error":
//! MESSAGE, "check": CHECK}. A tree has each stored field by its schema name, absent fields
//! left out and bytes as {"hex": ...}. -no-crc reads without CRC checks.
//!
//! -codecs decompresses one payload per line of standard input, CODEC MAGIC HEX ("-" for
//! no bytes), and prints "=" and the bytes in hex, or "refused".

use kafkacodec::Tree;
use std::io::{BufRead, Write};

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    // by bytes: a character that is not ASCII cannot split a slice of the text
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.as_bytes()
        .chunks_exact(2)
        .filter_map(|p| Some((digit(p[0])? << 4) | digit(p[1])?))
        .collect()
}

fn json_text(s: &str) -> String {
    let mut out = String::new();
    s.to_string().tree(&mut out);
    out
}

fn codecs() {
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 3 {
            continue;
        }
        let (codec, magic) = (f[0].parse().unwrap_or(-1), f[1].parse().unwrap_or(-1));
        let answer = match kafkacodec::compression::decompress(&unhex(f[2]), codec, magic, None) {
            Ok(b) => format!(
                "={}",
                b.iter().map(|x| format!("{x:02x}")).collect::<String>()
            ),
            Err(_) => "refused".to_string(),
        };
        if writeln!(out, "{answer}").is_err() {
            break;
        }
    }
}

fn run(job: &[&str], verify: bool) -> String {
    let usage = |msg: String| format!("{{\"error\":{},\"check\":\"usage\"}}", json_text(&msg));
    if job.len() != 4 {
        return usage("a job is CLASS, PARAM, OFFSET and PATH".into());
    }
    let name = job[0].replace('$', "");
    let params: Vec<i64> = if job[1] == "-" {
        vec![]
    } else {
        vec![job[1].parse().unwrap_or(0)]
    };
    let offset: usize = job[2].parse().unwrap_or(0);
    let data = match std::fs::read(job[3]) {
        Ok(d) => d,
        Err(e) => return usage(e.to_string()),
    };
    match kafkacodec::parse_tree(&name, &data[offset.min(data.len())..], &params, verify) {
        None => usage(format!(
            "no parser named {name} with {} params",
            params.len()
        )),
        Some(Ok(tree)) => format!("{{\"ok\":{tree}}}"),
        Some(Err(e)) => format!(
            "{{\"error\":{},\"check\":\"{}\"}}",
            json_text(&e.to_string()),
            e.check.name()
        ),
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args == ["-codecs"] {
        codecs();
        return;
    }
    let mut verify = true;
    if args.len() == 2 && args[0] == "-no-crc" {
        verify = false;
        args.remove(0);
    }
    if args.len() != 1 {
        eprintln!("usage: kafkacodec-dump [-no-crc] JOBS | -codecs");
        std::process::exit(2);
    }
    let jobs = match std::fs::read_to_string(&args[0]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{}: {e}", args[0]);
            std::process::exit(2);
        }
    };
    let mut out = std::io::BufWriter::new(std::io::stdout());
    for line in jobs.lines().filter(|l| !l.is_empty()) {
        let job: Vec<&str> = line.split('\t').collect();
        if writeln!(out, "{}", run(&job, verify)).is_err() {
            break;
        }
    }
}
