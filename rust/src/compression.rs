//! The schemas' `process: kafka_compression(codec, magic[, records])`: a compressed payload
//! decompressed as Kafka's Java streams read it (through Kafka's ChunkedBytesStream:
//! GZIPInputStream, SnappyInputStream, Lz4BlockInputStream, zstd-jni), to where they end.
//! kafkacodec.runtime.compression states the same rules and Kafka's own classes judge them
//! (tests/kafka/test_kafka_stream_ends.py); the Go package keeps them too
//! (go/kafkacodec/compression.go). The codecs themselves: flate2 (raw deflate), snap (raw
//! snappy blocks), libzstd through the zstd crate (the library zstd-jni wraps), and LZ4 blocks
//! decoded here as liblz4's LZ4_decompress_safe decides (lz4_block).

use std::io::Read;

/// What one compressed payload may inflate to (runtime/compression.py's
/// DEFAULT_MAX_INFLATED): a larger output is an error, never an allocation.
pub const MAX_INFLATED: usize = 128 << 20;

/// The codecs of a batch's or a legacy message's attributes.
pub const CODEC_NONE: i64 = 0;
pub const CODEC_GZIP: i64 = 1;
pub const CODEC_SNAPPY: i64 = 2;
pub const CODEC_LZ4: i64 = 3;
pub const CODEC_ZSTD: i64 = 4;

const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];

type Res<T> = std::result::Result<T, String>;

fn too_big(codec: &str) -> String {
    format!("{codec} data inflates past the limit of {MAX_INFLATED} bytes")
}

/// A payload of this codec and message format decompressed as Kafka reads it. records:
/// how many records a v2 batch says its region holds; of a region said to hold none Kafka
/// reads the codec's head alone (check_head), whatever follows it.
pub fn decompress(src: &[u8], codec: i64, magic: i64, records: Option<i64>) -> Res<Vec<u8>> {
    let top = if magic >= 2 { CODEC_ZSTD } else { CODEC_LZ4 };
    if !(0..=top).contains(&codec) {
        return Err(format!(
            "unknown compression codec {codec} for magic {magic}"
        ));
    }
    if records == Some(0) {
        check_head(src, codec, magic)?;
        return Ok(Vec::new());
    }
    match codec {
        CODEC_NONE => Ok(src.to_vec()),
        CODEC_GZIP => gunzip(src),
        CODEC_SNAPPY => unsnappy(src),
        CODEC_LZ4 => unlz4(src, magic),
        _ => unzstd(src),
    }
}

/// What Kafka reads of a compressed records region that holds no record
/// (runtime/compression.py's check_head): DefaultRecordBatch's streaming iterator opens the
/// codec's stream, whose constructor reads the gzip member header, the LZ4 frame header,
/// snappy-java's header or, when the bytes do not start with it, the one raw block it
/// decompresses whole; zstd-jni's reads nothing. Then no record is read.
fn check_head(src: &[u8], codec: i64, magic: i64) -> Res<()> {
    match codec {
        CODEC_GZIP => gzip_header(src, 0).map(|_| ()),
        CODEC_LZ4 => lz4_head(src, magic).map(|_| ()),
        CODEC_SNAPPY if src.len() < 16 || !src.starts_with(&XERIAL_MAGIC) => {
            unsnappy(src).map(|_| ())
        }
        _ => Ok(()),
    }
}

fn le16(b: &[u8], at: usize) -> usize {
    usize::from(b[at]) | usize::from(b[at + 1]) << 8
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn be32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

// ---------------------------------------------------------------------------- gzip

/// GZIPInputStream's input buffer as Kafka's GzipCompression sizes it: where the JDK looks
/// for a next member after one ends depends on what it has read ahead.
const GZIP_JDK_BUFFER: usize = 8 * 1024;

/// The length of the gzip member header at src[pos..], as the JDK's
/// GZIPInputStream.readHeader reads it (reserved flag bits not looked at; a header CRC
/// checked).
fn gzip_header(src: &[u8], pos: usize) -> Res<usize> {
    let n = src.len();
    let cut = || format!("gzip header cut short at byte {pos}");
    if n < pos + 10 {
        return Err(cut());
    }
    if src[pos] != 0x1f || src[pos + 1] != 0x8b {
        return Err(format!("not in gzip format at byte {pos}"));
    }
    if src[pos + 2] != 8 {
        return Err(format!(
            "gzip compression method {} at byte {pos} is not deflate",
            src[pos + 2]
        ));
    }
    let flg = src[pos + 3];
    let mut at = pos + 10;
    if flg & 4 != 0 {
        if n < at + 2 {
            return Err(cut());
        }
        at += 2 + le16(src, at);
        if at > n {
            return Err(cut());
        }
    }
    for bit in [8u8, 16] {
        if flg & bit != 0 {
            match src[at..].iter().position(|&b| b == 0) {
                Some(z) => at += z + 1,
                None => return Err(cut()),
            }
        }
    }
    if flg & 2 != 0 {
        if n < at + 2 {
            return Err(cut());
        }
        if le16(src, at) as u32 != crc32fast::hash(&src[pos..at]) & 0xffff {
            return Err(format!(
                "corrupt gzip header at byte {pos} (its CRC does not match)"
            ));
        }
        at += 2;
    }
    Ok(at - pos)
}

/// Raw deflate from src[pos..]: the bytes and where the deflate data ends.
fn inflate(src: &[u8], pos: usize, before: usize) -> Res<(Vec<u8>, usize)> {
    let mut d = flate2::Decompress::new(false);
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let consumed = d.total_in() as usize;
        let made = d.total_out() as usize;
        let status = d
            .decompress(
                &src[pos + consumed..],
                &mut chunk,
                flate2::FlushDecompress::None,
            )
            .map_err(|e| format!("gzip data does not decompress: {e}"))?;
        let got = d.total_out() as usize - made;
        out.extend_from_slice(&chunk[..got]);
        if before + out.len() > MAX_INFLATED {
            return Err(too_big("gzip"));
        }
        match status {
            flate2::Status::StreamEnd => return Ok((out, pos + d.total_in() as usize)),
            _ if got == 0 && d.total_in() as usize == consumed => {
                return Err("gzip data does not decompress: unexpected EOF".into());
            }
            _ => {}
        }
    }
}

/// java.util.zip.GZIPInputStream over the bytes (runtime/compression.py's _gunzip): a
/// member's header, raw deflate, trailer (CRC-32, length); then, only when the JDK looks
/// at what follows (input it has not read yet, or more than 26 bytes of its 8 KiB buffer
/// left after the deflate data), a next member if a header it takes starts there, else
/// the end: anything else after a member is never read.
fn gunzip(src: &[u8]) -> Res<Vec<u8>> {
    let size = src.len();
    let mut pos = gzip_header(src, 0)?;
    let mut in_pos = pos;
    let mut out = Vec::new();
    loop {
        let (member, deflate_end) = inflate(src, pos, out.len())?;
        if deflate_end > in_pos {
            let fills = (deflate_end - in_pos).div_ceil(GZIP_JDK_BUFFER);
            in_pos = size.min(in_pos + fills * GZIP_JDK_BUFFER);
        }
        let buffered = in_pos.saturating_sub(deflate_end);
        if size - deflate_end < 8 {
            return Err("gzip member ends inside its trailer".into());
        }
        if le32(src, deflate_end) != crc32fast::hash(&member)
            || le32(src, deflate_end + 4) != member.len() as u32
        {
            return Err("corrupt gzip trailer (its CRC or length does not match)".into());
        }
        out.extend_from_slice(&member);
        in_pos = in_pos.max(deflate_end + 8);
        if !(size > in_pos || buffered > 26) {
            return Ok(out);
        }
        match gzip_header(src, deflate_end + 8) {
            Ok(header) => {
                pos = deflate_end + 8 + header;
                in_pos = in_pos.max(pos);
            }
            Err(_) => return Ok(out), // "ignore any malformed": the stream ends here
        }
    }
}

// ---------------------------------------------------------------------------- snappy

/// What Kafka asks of SnappyInputStream at a time (SnappyCompression.decompressionOutputSize),
/// and the largest chunk SnappyInputStream takes.
const SNAPPY_KAFKA_READ: usize = 2 * 1024;
const SNAPPY_MAX_CHUNK: i32 = 512 << 20;

/// snappy-java's SnappyInputStream as Kafka reads it (runtime/compression.py's _unsnappy):
/// fewer than 16 bytes, or no magic, is one raw block; else chunks (an int32 length, a raw
/// block) until fewer than 4 bytes are left; a length that is the magic's first 4 bytes
/// starts a concatenated stream's header (version at least 1), or, when the rest of the
/// magic does not follow, is 16 bytes skipped: the end when the read Kafka made (2 KiB of
/// output at a time) had given nothing yet, else the stream goes on.
fn unsnappy(src: &[u8]) -> Res<Vec<u8>> {
    if src.is_empty() {
        return Err("snappy data is empty".into());
    }
    if src.len() < 16 || !src.starts_with(&XERIAL_MAGIC) {
        return snappy_block(src, 0);
    }
    let mut out = Vec::new();
    let (mut at, mut read_start) = (16usize, 0usize);
    let head = be32(&XERIAL_MAGIC, 0);
    while src.len() - at >= 4 {
        let n = be32(src, at);
        at += 4;
        if n == head {
            if src.len() - at < 12 {
                return Err(format!("snappy-java header cut short at byte {}", at - 4));
            }
            let magic = src[at..at + 4] == XERIAL_MAGIC[4..];
            let version = be32(src, at + 4);
            at += 12;
            if !magic {
                if (out.len() - read_start) % SNAPPY_KAFKA_READ == 0 {
                    break; // -1: the end
                }
                read_start = out.len();
                continue;
            }
            if version < 1 {
                return Err(format!(
                    "snappy-java stream of version {version} at byte {}",
                    at - 16
                ));
            }
            continue;
        }
        if !(0..=SNAPPY_MAX_CHUNK).contains(&n) || n as usize > src.len() - at {
            return Err(format!(
                "snappy-java chunk at byte {} claims {n} bytes, {} left",
                at - 4,
                src.len() - at
            ));
        }
        let block = snappy_block(&src[at..at + n as usize], out.len())?;
        out.extend_from_slice(&block);
        at += n as usize;
    }
    Ok(out)
}

fn snappy_block(block: &[u8], before: usize) -> Res<Vec<u8>> {
    let n = snap::raw::decompress_len(block)
        .map_err(|_| "snappy block has no valid length preamble".to_string())?;
    if before + n > MAX_INFLATED {
        return Err(too_big("snappy"));
    }
    let mut out = vec![0u8; n];
    let got = snap::raw::Decoder::new()
        .decompress(block, &mut out)
        .map_err(|e| format!("snappy block does not decompress: {e}"))?;
    if got != n {
        return Err("snappy block does not decompress".into());
    }
    Ok(out)
}

// ---------------------------------------------------------------------------- lz4

const LZ4_MAGIC: u32 = 0x184D_2204;

/// Kafka's Lz4BlockInputStream.readHeader over an LZ4 frame (runtime/compression.py's
/// _lz4_head): where the blocks start, the FLG byte and the largest block. FLG with no
/// reserved bit, independent blocks, version 1; BD with no reserved bit and a block size of
/// 64 KiB to 4 MiB; the descriptor's checksum but for magic 0 (KAFKA-3160).
fn lz4_head(src: &[u8], magic: i64) -> Res<(usize, u8, usize)> {
    let n = src.len();
    if n < 6 {
        return Err("LZ4 frame header cut short".into());
    }
    if le32(src, 0) != LZ4_MAGIC {
        return Err("not an LZ4 frame (bad magic number)".into());
    }
    let (flg, bd) = (src[4], src[5]);
    if flg & 3 != 0 {
        return Err("LZ4 frame descriptor: reserved bits must be 0".into());
    }
    if flg & 0x20 == 0 {
        return Err("LZ4 frame descriptor: dependent blocks are not supported".into());
    }
    if flg >> 6 != 1 {
        return Err(format!("LZ4 frame version {} is not supported", flg >> 6));
    }
    if bd & 0x8f != 0 {
        return Err("LZ4 frame descriptor: reserved block descriptor bits must be 0".into());
    }
    if (bd >> 4) & 7 < 4 {
        return Err("LZ4 frame descriptor: the block size must be 4 to 7".into());
    }
    let mut at = 6;
    if flg & 0x08 != 0 {
        if n - at < 8 {
            return Err("LZ4 frame header cut short".into());
        }
        at += 8;
    }
    if n - at < 1 {
        return Err("LZ4 frame header cut short".into());
    }
    if magic != 0 && u32::from(src[at]) != (xxhash_rust::xxh32::xxh32(&src[4..at], 0) >> 8) & 0xff {
        return Err("LZ4 frame descriptor corrupted (its checksum does not match)".into());
    }
    Ok((at + 1, flg, 1 << (8 + 2 * usize::from((bd >> 4) & 7))))
}

/// Kafka's Lz4BlockInputStream over one LZ4 frame (runtime/compression.py's _unlz4): blocks
/// to the end mark (a size of 0 whatever its top bit), a block checksum checked, the content
/// checksum not; a block of no bytes ends the stream (Kafka's ChunkedBytesStream), and
/// nothing after the end mark is read.
fn unlz4(src: &[u8], magic: i64) -> Res<Vec<u8>> {
    let n = src.len();
    let (mut at, flg, max_block) = lz4_head(src, magic)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; max_block];
    loop {
        if n - at < 4 {
            return Err("LZ4 frame ends before its end mark".into());
        }
        let word = le32(src, at);
        at += 4;
        let size = (word & 0x7fff_ffff) as usize;
        if size == 0 {
            if flg & 0x04 != 0 && n - at < 4 {
                return Err("LZ4 frame ends inside its content checksum".into());
            }
            return Ok(out);
        }
        if size > max_block {
            return Err(format!(
                "LZ4 block of {size} bytes, past the frame's {max_block}"
            ));
        }
        if n - at < size {
            return Err("LZ4 frame ends inside a block".into());
        }
        let block = &src[at..at + size];
        let got: &[u8] = if word & 0x8000_0000 != 0 {
            block
        } else {
            let k = lz4_block(block, &mut buf)
                .ok_or_else(|| format!("LZ4 block at byte {at} does not decompress"))?;
            &buf[..k]
        };
        at += size;
        if flg & 0x10 != 0 {
            if n - at < 4 {
                return Err("LZ4 frame ends inside a block checksum".into());
            }
            if le32(src, at) != xxhash_rust::xxh32::xxh32(block, 0) {
                return Err(format!("LZ4 block checksum mismatch at byte {}", at - size));
            }
            at += 4;
        }
        if got.is_empty() {
            return Ok(out); // a block of no bytes ends the stream
        }
        if out.len() + got.len() > MAX_INFLATED {
            return Err(too_big("lz4"));
        }
        out.extend_from_slice(got);
    }
}

/// One LZ4 block into dst, whose length is the frame's largest block, as LZ4_decompress_safe
/// (liblz4, lib/lz4.c LZ4_decompress_generic: full block, no dictionary) decides it: the
/// decompressor lz4-java calls for Kafka's Lz4BlockInputStream. A last sequence's literals
/// end the block whatever its match length nibble says; literals that end within 8 bytes of
/// the block's end must end it; no match ends within 5 bytes of the output's bound; a match
/// of offset 0 is zeros; both of liblz4's loops are followed (the fast one while the output
/// is 64 bytes or more from the bound, then the safe one with its shortcut). The bytes
/// decoded, or None. The Go package's lz4Block states the same rules.
fn lz4_block(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    const MIN_MATCH: usize = 4;
    const LAST_LITERALS: usize = 5;
    const MF_LIMIT: usize = 12;
    const FAST_SAFE: usize = 64;
    let iend = src.len();
    let oend = dst.len();
    if oend == 0 {
        return (iend == 1 && src[0] == 0).then_some(0);
    }
    if iend == 0 {
        return None;
    }
    let (mut ip, mut op) = (0usize, 0usize);
    // read_variable_length: bytes of 255 and the one that ends them, each read checked
    // against limit (and, first, the position itself when initial)
    let var_len = |ip: &mut usize, limit: isize, initial: bool| -> Option<usize> {
        if initial && *ip as isize >= limit {
            return None;
        }
        let mut n = 0usize;
        loop {
            let b = *src.get(*ip)?;
            *ip += 1;
            n += usize::from(b);
            if *ip as isize > limit {
                return None;
            }
            if b != 255 {
                return Some(n);
            }
        }
    };
    fn copy_match(dst: &mut [u8], op: usize, offset: usize, length: usize) {
        if offset == 0 {
            dst[op..op + length].fill(0); // liblz4 writes zeros
        } else {
            for i in 0..length {
                dst[op + i] = dst[op - offset + i];
            }
        }
    }
    let (i_end, o_end) = (iend as isize, oend as isize);
    let mut fast = oend >= FAST_SAFE;
    loop {
        #[derive(PartialEq)]
        enum Step {
            Next,
            Literals,
            MatchLength,
            MatchCopy,
        }
        let mut step = Step::Next;
        let mut token = 0usize;
        let mut length = 0usize;
        let mut offset = 0usize;
        if fast {
            token = usize::from(*src.get(ip)?);
            ip += 1;
            length = token >> 4;
            if length == 15 {
                length += var_len(&mut ip, i_end - 15, true)?;
                if (op + length) as isize > o_end - 32 || (ip + length) as isize > i_end - 32 {
                    step = Step::Literals;
                }
            } else if ip as isize > i_end - 17 {
                step = Step::Literals;
            }
            if step == Step::Next {
                dst[op..op + length].copy_from_slice(&src[ip..ip + length]);
                ip += length;
                op += length;
                offset = le16(src, ip);
                ip += 2;
                length = token & 15;
                if length == 15 {
                    length +=
                        var_len(&mut ip, i_end - LAST_LITERALS as isize + 1, false)? + MIN_MATCH;
                } else {
                    length += MIN_MATCH;
                }
                if (op + length) as isize >= o_end - FAST_SAFE as isize {
                    step = Step::MatchCopy;
                } else {
                    if offset > op {
                        return None;
                    }
                    copy_match(dst, op, offset, length);
                    op += length;
                    continue;
                }
            }
            fast = false;
        }
        if step == Step::Next {
            // the safe loop
            token = usize::from(*src.get(ip)?);
            ip += 1;
            length = token >> 4;
            if length != 15 && (ip as isize) < i_end - 16 && op as isize <= o_end - 32 {
                // the shortcut
                dst[op..op + length].copy_from_slice(&src[ip..ip + length]);
                op += length;
                ip += length;
                length = token & 15;
                offset = le16(src, ip);
                ip += 2;
                if length != 15 && offset >= 8 && offset <= op {
                    copy_match(dst, op, offset, length + MIN_MATCH);
                    op += length + MIN_MATCH;
                    continue;
                }
                step = Step::MatchLength;
            } else {
                if length == 15 {
                    length += var_len(&mut ip, i_end - 15, true)?;
                }
                step = Step::Literals;
            }
        }
        if step == Step::Literals {
            let cpy = op + length;
            if cpy as isize > o_end - MF_LIMIT as isize
                || (ip + length) as isize > i_end - (2 + 1 + LAST_LITERALS) as isize
            {
                // the last sequence: its literals end the input, within the output
                if ip + length != iend || cpy > oend {
                    return None;
                }
                dst[op..cpy].copy_from_slice(&src[ip..iend]);
                return Some(cpy);
            }
            dst[op..cpy].copy_from_slice(&src[ip..ip + length]);
            ip += length;
            op = cpy;
            offset = le16(src, ip);
            ip += 2;
            length = token & 15;
            step = Step::MatchLength;
        }
        if step == Step::MatchLength {
            if length == 15 {
                length += var_len(&mut ip, i_end - LAST_LITERALS as isize + 1, false)?;
            }
            length += MIN_MATCH;
        }
        // safe_match_copy
        if offset > op {
            return None;
        }
        let cpy = op + length;
        if cpy as isize > o_end - LAST_LITERALS as isize {
            return None; // the last 5 bytes must be literals
        }
        copy_match(dst, op, offset, length);
        op = cpy;
    }
}

// ---------------------------------------------------------------------------- zstd

const ZSTD_MAGIC: u32 = 0xFD2F_B528;
const ZSTD_SKIPPABLE: u32 = 0x184D_2A50; // to 0x184D2A5F
/// How much input zstd-jni's ZstdInputStreamNoFinalizer reads at a time.
const ZSTD_JNI_READ: usize = (128 << 10) + 3;

/// Where the frame (or skippable frame) at src[pos..] ends, from its headers and its
/// blocks' headers (RFC 8878); None when the data ends inside a magic number (zstd waits
/// for more); an error for bytes that start no frame or a reserved block. The end may lie
/// past the data (the frame is cut short). runtime/compression.py's _zstd_frame_end.
fn zstd_frame_end(src: &[u8], pos: usize) -> Res<Option<usize>> {
    let n = src.len();
    let head = &src[pos..n.min(pos + 4)];
    let magic = ZSTD_MAGIC.to_le_bytes();
    let skip = ZSTD_SKIPPABLE.to_le_bytes();
    if head.len() < 4 || (n - pos < 5 && head == magic) {
        let skippable = !head.is_empty()
            && (0x50..=0x5f).contains(&head[0])
            && head[1..] == skip[1..head.len()];
        if magic.starts_with(head) || skippable {
            return Ok(None);
        }
        return Err(format!("zstd data holds no frame at byte {pos}"));
    }
    let m = le32(src, pos);
    if m & 0xFFFF_FFF0 == ZSTD_SKIPPABLE {
        if n - pos < 8 {
            return Ok(Some(pos + 8));
        }
        return Ok(Some(pos + 8 + le32(src, pos + 4) as usize));
    }
    if m != ZSTD_MAGIC {
        return Err(format!("zstd data holds no frame at byte {pos}"));
    }
    let fhd = usize::from(src[pos + 4]);
    let single = (fhd >> 5) & 1;
    let mut at = pos + 4 + 1 + (1 - single) + [0, 1, 2, 4][fhd & 3] + [single, 2, 4, 8][fhd >> 6];
    loop {
        if n < at + 3 {
            return Ok(Some(at + 3));
        }
        let bh =
            usize::from(src[at]) | usize::from(src[at + 1]) << 8 | usize::from(src[at + 2]) << 16;
        let kind = (bh >> 1) & 3;
        if kind == 3 {
            return Err(format!("zstd block of the reserved type at byte {at}"));
        }
        at += 3 + if kind == 1 { 1 } else { bh >> 3 };
        if bh & 1 != 0 {
            return Ok(Some(at + 4 * ((fhd >> 2) & 1)));
        }
    }
}

/// One frame (or what a frame cut short gives before its end) through libzstd's streaming
/// decoder, as zstd-jni reads it: a block's content as soon as the block is whole, onto out
/// (the frames before it; all of them bounded by MAX_INFLATED).
fn zstd_frame(frame: &[u8], out: &mut Vec<u8>) -> Res<()> {
    thread_local! {
        // one decompression context for every frame a thread reads (making one costs more
        // than decompressing a batch of a few KB); a Decoder resets its session first
        static CONTEXT: std::cell::RefCell<zstd::zstd_safe::DCtx<'static>> =
            std::cell::RefCell::new(zstd::zstd_safe::DCtx::create());
    }
    CONTEXT.with(|context| {
        let mut context = context.borrow_mut();
        let mut d = zstd::stream::read::Decoder::with_context(frame, &mut context).single_frame();
        let mut chunk = [0u8; 32 * 1024];
        loop {
            match d.read(&mut chunk) {
                Ok(0) => return Ok(()),
                Ok(k) => {
                    out.extend_from_slice(&chunk[..k]);
                    if out.len() > MAX_INFLATED {
                        return Err(too_big("zstd"));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()), // cut short
                Err(e) => return Err(format!("zstd data does not decompress: {e}")),
            }
        }
    })
}

/// zstd-jni's ZstdInputStreamNoFinalizer as Kafka reads it (runtime/compression.py's
/// _unzstd): frames one after the other, empty and skippable ones giving nothing; at the
/// end of the data after a frame cut short (what it gave is kept) or inside a magic number:
/// the end if a frame ended since zstd-jni last read input (131075 bytes at a time), else
/// "Truncated source".
fn unzstd(src: &[u8]) -> Res<Vec<u8>> {
    let n = src.len();
    let mut out = Vec::new();
    let (mut done, mut pos): (Option<usize>, usize) = (None, 0);
    while pos < n {
        let Some(end) = zstd_frame_end(src, pos)? else {
            break;
        };
        let skippable = le32(src, pos) & 0xFFFF_FFF0 == ZSTD_SKIPPABLE;
        if !skippable {
            zstd_frame(&src[pos..end.min(n)], &mut out)?;
        }
        if end > n {
            break;
        }
        done = Some(end);
        pos = end;
    }
    if pos >= n {
        return Ok(out);
    }
    let last_read = (n - 1) / ZSTD_JNI_READ * ZSTD_JNI_READ;
    if done.is_some_and(|d| d > last_read) {
        return Ok(out);
    }
    Err(format!(
        "zstd frame at byte {pos} is cut short (truncated source)"
    ))
}
