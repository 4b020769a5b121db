//! What the generated parsers call: errors as values, Kafka's varints, CRC checks. The rules
//! are kafkacodec's Python runtime's (runtime/varint.py, runtime/errors.py) and the Go
//! package's (go/kafkacodec/runtime.go), which the cross-language tests hold together.

// The helpers of every schema construct; a set of schemas uses some of them.
#![allow(dead_code)]

use std::fmt;

/// What an [`Error`] found wrong, as kafkacodec's Python errors are classed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The data ends inside a structure (TruncatedError).
    Truncated,
    /// A stored CRC does not match the bytes (ChecksumError).
    Checksum,
    /// A value breaks the schema's rule (ValidationError).
    Invalid,
    /// A length, count, varint or compressed payload is impossible (CorruptRecordError).
    Corrupt,
    /// A length field disagrees with the fields it counts (LengthMismatchError).
    Length,
}

impl Check {
    /// The check's name, as the other languages' dumps print it.
    pub fn name(self) -> &'static str {
        match self {
            Check::Truncated => "truncated",
            Check::Checksum => "checksum",
            Check::Invalid => "invalid",
            Check::Corrupt => "corrupt",
            Check::Length => "length",
        }
    }
}

/// What a parser reports about bad input: where (the schema and the path of the type or
/// field), the byte position, the kind of check and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub at: &'static str,
    pub pos: usize,
    pub check: Check,
    pub msg: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {} [{}]", self.pos, self.msg, self.at)
    }
}

impl std::error::Error for Error {}

/// A parser's result.
pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn fail(check: Check, at: &'static str, pos: usize, msg: String) -> Error {
    Error {
        at,
        pos,
        check,
        msg,
    }
}

pub(crate) fn truncated(at: &'static str, pos: usize, end: usize, needed: usize) -> Error {
    if needed > 0 {
        let left = end.saturating_sub(pos);
        return fail(
            Check::Truncated,
            at,
            pos,
            format!("data ends inside the structure ({needed} bytes needed, {left} left)"),
        );
    }
    fail(
        Check::Truncated,
        at,
        pos,
        "data ends inside the structure".into(),
    )
}

pub(crate) fn trailing(at: &'static str, pos: usize, end: usize) -> Error {
    fail(
        Check::Corrupt,
        at,
        pos,
        format!("{} unexpected bytes after the structure", end - pos),
    )
}

pub(crate) fn invalid(
    at: &'static str,
    pos: usize,
    name: &str,
    value: impl fmt::Display,
    msg: &str,
) -> Error {
    fail(
        Check::Invalid,
        at,
        pos,
        format!("{name} {msg}, got {value}"),
    )
}

pub(crate) fn bad_size(at: &'static str, pos: usize, name: &str, n: i64, left: usize) -> Error {
    if n < 0 {
        return fail(
            Check::Corrupt,
            at,
            pos,
            format!("size of {name} is negative ({n})"),
        );
    }
    fail(
        Check::Truncated,
        at,
        pos,
        format!("{name} is {n} bytes long, {left} left"),
    )
}

pub(crate) fn bad_length(at: &'static str, pos: usize, name: &str, n: i64, left: usize) -> Error {
    if n < 0 {
        return fail(Check::Corrupt, at, pos, format!("{name} is negative ({n})"));
    }
    fail(
        Check::Truncated,
        at,
        pos,
        format!("{name} says {n} bytes follow, {left} left"),
    )
}

pub(crate) fn bad_count(
    at: &'static str,
    pos: usize,
    name: &str,
    count: i64,
    left: usize,
    least: usize,
) -> Error {
    if least == 0 {
        return fail(
            Check::Corrupt,
            at,
            pos,
            format!("count of {name} is negative ({count})"),
        );
    }
    fail(
        Check::Corrupt,
        at,
        pos,
        format!("{count} {name} cannot fit in {left} bytes (each takes at least {least})"),
    )
}

pub(crate) fn length_mismatch(
    at: &'static str,
    start: usize,
    declared: usize,
    used: usize,
) -> Error {
    fail(
        Check::Length,
        at,
        start,
        format!("declared length {declared} but the fields take {used} bytes"),
    )
}

pub(crate) fn no_case(at: &'static str, pos: usize, on: &str, value: i64) -> Error {
    fail(
        Check::Corrupt,
        at,
        pos,
        format!("no type for {on} = {value}"),
    )
}

pub(crate) fn no_progress(at: &'static str, pos: usize, name: &str) -> Error {
    fail(
        Check::Corrupt,
        at,
        pos,
        format!("an element of {name} took no bytes"),
    )
}

pub(crate) fn bad_contents(at: &'static str, pos: usize, expected: &[u8], found: &[u8]) -> Error {
    fail(
        Check::Corrupt,
        at,
        pos,
        format!("expected bytes {}, found {}", hex(expected), hex(found)),
    )
}

pub(crate) fn corrupt(at: &'static str, pos: usize, what: impl fmt::Display) -> Error {
    fail(Check::Corrupt, at, pos, what.to_string())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The CRC-32C of a v2 batch (from its attributes to its end).
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// The CRC-32 of a legacy message (from its magic to its end).
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

pub(crate) fn check_crc(
    algorithm: &str,
    stored: u32,
    covered: &[u8],
    at_pos: usize,
    at: &'static str,
) -> Result<()> {
    let computed = if algorithm == "crc32c" {
        crc32c(covered)
    } else {
        crc32(covered)
    };
    if computed != stored {
        return Err(fail(
            Check::Checksum,
            at,
            at_pos,
            format!("CRC mismatch: {algorithm} stored {stored:#010x}, computed {computed:#010x}"),
        ));
    }
    Ok(())
}

fn varint_kind(max_len: usize, signed: bool) -> String {
    let kind = if max_len == 10 { "varlong" } else { "varint" };
    if signed {
        kind.to_string()
    } else {
        format!("unsigned {kind}")
    }
}

/// The 7-bit groups at buf[pos..] as one unsigned number, bounded by max_len bytes and by
/// what the type holds (32 bits for 5, 64 for 10), as runtime/varint.py reads them.
fn read_raw(
    buf: &[u8],
    pos: usize,
    end: usize,
    max_len: usize,
    at: &'static str,
    signed: bool,
) -> Result<(u64, usize)> {
    let start = pos;
    let mut p = pos;
    let mut raw: u64 = 0;
    let mut shift: u32 = 0;
    let mut over = false;
    let limit = end.min(pos + max_len);
    while p < limit {
        let b = buf[p];
        p += 1;
        let group = u64::from(b & 0x7f);
        if shift == 63 && group > 1 {
            over = true;
        }
        if shift < 64 {
            raw |= group << shift;
        }
        if b < 0x80 {
            if over || (max_len == 5 && raw >> 32 != 0) {
                return Err(fail(
                    Check::Corrupt,
                    at,
                    start,
                    format!("{} value out of range", varint_kind(max_len, signed)),
                ));
            }
            return Ok((raw, p));
        }
        shift += 7;
    }
    if p >= end && p - start < max_len {
        return Err(fail(
            Check::Truncated,
            at,
            start,
            "varint runs past the end of the data".into(),
        ));
    }
    Err(fail(
        Check::Corrupt,
        at,
        start,
        format!(
            "{} longer than {max_len} bytes",
            varint_kind(max_len, signed)
        ),
    ))
}

/// A zigzag varint (max_len 5) or varlong (10), as Kafka's ByteUtils reads it within
/// FORMATS.md's range.
#[inline(always)]
pub(crate) fn read_varint(
    buf: &[u8],
    pos: usize,
    end: usize,
    max_len: usize,
    at: &'static str,
) -> Result<(i64, usize)> {
    // one and two bytes (a record's deltas and lengths, mostly) without the general loop
    if pos < end && buf[pos] < 0x80 {
        return Ok((unzigzag(u64::from(buf[pos])), pos + 1));
    }
    if pos + 1 < end && buf[pos + 1] < 0x80 {
        let raw = u64::from(buf[pos] & 0x7f) | (u64::from(buf[pos + 1]) << 7);
        return Ok((unzigzag(raw), pos + 2));
    }
    read_varint_long(buf, pos, end, max_len, at)
}

/// A zigzag-encoded number's value.
#[inline(always)]
fn unzigzag(raw: u64) -> i64 {
    ((raw >> 1) as i64) ^ -((raw & 1) as i64)
}

/// read_varint past two bytes (and its errors): out of the inlined path.
#[cold]
#[inline(never)]
fn read_varint_long(
    buf: &[u8],
    pos: usize,
    end: usize,
    max_len: usize,
    at: &'static str,
) -> Result<(i64, usize)> {
    let (raw, next) = read_raw(buf, pos, end, max_len, at, true)?;
    Ok((unzigzag(raw), next))
}

/// An unsigned varint (max_len 5) or varlong (10).
#[inline(always)]
pub(crate) fn read_uvarint(
    buf: &[u8],
    pos: usize,
    end: usize,
    max_len: usize,
    at: &'static str,
) -> Result<(i64, usize)> {
    if pos < end && buf[pos] < 0x80 {
        return Ok((i64::from(buf[pos]), pos + 1));
    }
    let (raw, next) = read_raw(buf, pos, end, max_len, at, false)?;
    if max_len == 10 && raw > i64::MAX as u64 {
        return Err(fail(
            Check::Corrupt,
            at,
            pos,
            "unsigned varlong value past 2^63 - 1".into(),
        ));
    }
    Ok((raw as i64, next))
}

/// Kaitai's (Python's) integer division, rounding down; 0 for a division by 0 (which the
/// schemas never make).
pub(crate) fn floor_div(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let q = a.wrapping_div(b);
    if a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

pub(crate) fn floor_mod(a: i64, b: i64) -> i64 {
    a.wrapping_sub(floor_div(a, b).wrapping_mul(b))
}

// ---------------------------------------------------------------------------- reading

macro_rules! be_reader {
    ($name:ident, $t:ty, $n:expr) => {
        /// A big-endian value at buf[p..] (the parsers check its bounds before).
        #[inline]
        pub(crate) fn $name(buf: &[u8], p: usize) -> $t {
            let mut b = [0u8; $n];
            b.copy_from_slice(&buf[p..p + $n]);
            <$t>::from_be_bytes(b)
        }
    };
}
be_reader!(be_i16, i16, 2);
be_reader!(be_u16, u16, 2);
be_reader!(be_i32, i32, 4);
be_reader!(be_u32, u32, 4);
be_reader!(be_i64, i64, 8);
be_reader!(be_u64, u64, 8);
be_reader!(be_f32, f32, 4);
be_reader!(be_f64, f64, 8);

/// src as Java reads it (java_utf8), borrowed when it is UTF-8 already (no allocation).
pub fn java_str(src: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(src) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => std::borrow::Cow::Owned(java_utf8(src)),
    }
}

/// Where the decompressed regions of a parse are kept, for as long as the parsed value
/// (which borrows them, as it borrows its input) lives: one per parse, or one for many.
///
/// ```
/// let data = std::fs::read("../tests/vectors/kafka-java/v2/v2_gzip_basic.bin").unwrap();
/// let arena = kafkacodec::Arena::new();
/// let log = kafkacodec::KafkaLog::parse(&data, true, &arena).unwrap();
/// assert_eq!(log.entries.len(), 1);
/// ```
#[derive(Default)]
pub struct Arena {
    // made on the first region kept: an arena no region needs (an uncompressed batch, an
    // index) costs no allocation
    regions: std::cell::OnceCell<typed_arena::Arena<Vec<u8>>>,
}

impl Arena {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps a decompressed region; its bytes live as long as the arena.
    pub fn keep(&self, region: Vec<u8>) -> &[u8] {
        self.regions
            .get_or_init(typed_arena::Arena::new)
            .alloc(region)
    }
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let regions = self.regions.get().map_or(0, typed_arena::Arena::len);
        f.debug_struct("Arena").field("regions", &regions).finish()
    }
}

/// src as Java's `new String(bytes, StandardCharsets.UTF_8)` reads it (JDK 17): each
/// malformed sequence one U+FFFD where Java draws its bounds (kafkacodec.records.javatext).
pub fn java_utf8(src: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(src) {
        return s.to_string();
    }
    const R: char = '\u{FFFD}';
    let cont = |b: u8| b & 0xC0 == 0x80;
    let mut out = String::with_capacity(src.len());
    let (mut sp, sl) = (0usize, src.len());
    while sp < sl {
        let b1 = src[sp];
        sp += 1;
        if b1 < 0x80 {
            out.push(char::from(b1));
        } else if b1 >> 5 == 0b110 && b1 & 0x1E != 0 {
            if sp < sl {
                let b2 = src[sp];
                if cont(b2) {
                    out.push(
                        char::from_u32((u32::from(b1 & 0x1F) << 6) | u32::from(b2 & 0x3F))
                            .unwrap_or(R),
                    );
                    sp += 1;
                } else {
                    out.push(R);
                }
                continue;
            }
            out.push(R);
            break;
        } else if b1 >> 4 == 0b1110 {
            if sp + 1 < sl {
                let (b2, b3) = (src[sp], src[sp + 1]);
                let bad2 = (b1 == 0xE0 && b2 & 0xE0 == 0x80) || !cont(b2);
                if bad2 || !cont(b3) {
                    out.push(R);
                    sp += if bad2 { 0 } else { 1 };
                } else {
                    let c = (u32::from(b1 & 0x0F) << 12)
                        | (u32::from(b2 & 0x3F) << 6)
                        | u32::from(b3 & 0x3F);
                    out.push(if (0xD800..=0xDFFF).contains(&c) {
                        R
                    } else {
                        char::from_u32(c).unwrap_or(R)
                    });
                    sp += 2;
                }
                continue;
            }
            out.push(R);
            if sp < sl && ((b1 == 0xE0 && src[sp] & 0xE0 == 0x80) || !cont(src[sp])) {
                continue;
            }
            break;
        } else if b1 >> 3 == 0b11110 {
            let mut bad2 = b1 > 0xF4;
            if sp < sl {
                let b2 = src[sp];
                bad2 = bad2
                    || (b1 == 0xF0 && !(0x90..=0xBF).contains(&b2))
                    || (b1 == 0xF4 && b2 & 0xF0 != 0x80);
                bad2 = bad2 || !cont(b2);
            }
            if sp + 2 < sl {
                let (b2, b3, b4) = (src[sp], src[sp + 1], src[sp + 2]);
                let uc = (u32::from(b1 & 0x07) << 18)
                    | (u32::from(b2 & 0x3F) << 12)
                    | (u32::from(b3 & 0x3F) << 6)
                    | u32::from(b4 & 0x3F);
                if cont(b2) && cont(b3) && cont(b4) && (0x10000..=0x10FFFF).contains(&uc) {
                    out.push(char::from_u32(uc).unwrap_or(R));
                    sp += 3;
                } else {
                    out.push(R);
                    sp += if bad2 {
                        0
                    } else if !cont(b3) {
                        1
                    } else {
                        2
                    };
                }
                continue;
            }
            out.push(R);
            if bad2 {
                continue;
            }
            sp += 1;
            if sp < sl && !cont(src[sp]) {
                continue;
            }
            break;
        } else {
            out.push(R);
        }
    }
    out
}

// ---------------------------------------------------------------------------- the tree

/// A parsed value as the cross-language tests' JSON: each stored field by its schema name,
/// absent fields left out, bytes as {"hex": ...} (go/cmd/kafkacodec-dump's shape).
pub trait Tree {
    fn tree(&self, out: &mut String);
    /// Whether the value is absent (a field left out of its object).
    fn absent(&self) -> bool {
        false
    }
}

macro_rules! tree_number {
    ($($t:ty),*) => {$(
        impl Tree for $t {
            fn tree(&self, out: &mut String) {
                out.push_str(&self.to_string());
            }
        }
    )*};
}
tree_number!(i8, u8, i16, u16, i32, u32, i64, u64, bool);

macro_rules! tree_float {
    ($($t:ty),*) => {$(
        impl Tree for $t {
            /// The shortest text that reads back as the value (Debug's); NaN and the
            /// infinities as Python's json writes them.
            fn tree(&self, out: &mut String) {
                if self.is_nan() {
                    out.push_str("NaN");
                } else if self.is_infinite() {
                    out.push_str(if *self > 0.0 { "Infinity" } else { "-Infinity" });
                } else {
                    out.push_str(&format!("{self:?}"));
                }
            }
        }
    )*};
}
tree_float!(f32, f64);

impl Tree for &[u8] {
    fn tree(&self, out: &mut String) {
        out.push_str("{\"hex\":\"");
        for b in self.iter() {
            out.push_str(&format!("{b:02x}"));
        }
        out.push_str("\"}");
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

impl Tree for String {
    fn tree(&self, out: &mut String) {
        json_string(self, out);
    }
}

impl Tree for std::borrow::Cow<'_, str> {
    fn tree(&self, out: &mut String) {
        json_string(self, out);
    }
}

impl<T: Tree> Tree for Vec<T> {
    fn tree(&self, out: &mut String) {
        out.push('[');
        for (i, v) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            v.tree(out);
        }
        out.push(']');
    }
}

impl<T: Tree> Tree for Option<T> {
    fn tree(&self, out: &mut String) {
        match self {
            Some(v) => v.tree(out),
            None => out.push_str("null"),
        }
    }
    fn absent(&self) -> bool {
        self.is_none()
    }
}

impl<T: Tree> Tree for Box<T> {
    fn tree(&self, out: &mut String) {
        (**self).tree(out)
    }
}

/// An object of the tree being written: its fields one by one.
pub struct Obj<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Obj<'a> {
    pub fn new(out: &'a mut String) -> Self {
        out.push('{');
        Obj { out, first: true }
    }

    pub fn field(&mut self, name: &str, value: &dyn Tree) {
        if value.absent() {
            return;
        }
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out.push('"');
        self.out.push_str(name);
        self.out.push_str("\":");
        value.tree(self.out);
    }

    pub fn end(self) {
        self.out.push('}');
    }
}
