// The schemas' custom `process: kafka_compression(codec, magic[, records])` routine for the official
// Kaitai compiler's JavaScript output (Node). Put this folder on NODE_PATH (the compiled
// parsers require('KafkaCompression')) and `npm install` its package.json.
//
// Codecs as Kafka writes them (FORMATS.md 3): 1 gzip (members may be concatenated),
// 2 snappy (xerial framing, or one raw block), 3 lz4 (frame format; magic 0 frames carry
// Kafka's old, wrong header checksum, which is not checked), 4 zstd (magic 2 only).
// Each is read as Kafka's Java streams read it, to where they end (what follows a stream
// is read, skipped or refused as they do): kafkacodec.runtime.compression states the same
// rules, and Kafka's own classes judge them (tests/kafka/test_kafka_stream_ends.py).
// A region that inflates past KafkaCompression.maxSize (128 MB) is refused.
"use strict";
const zlib = require("zlib");
const xxh32 = require("lz4js/xxh32.js");
const fzstd = require("fzstd");

const { crc32 } = require("./KafkaCrc");

const XERIAL = [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00];
const LZ4_MAGIC = 0x184d2204;

class KafkaCompressionError extends Error {}

function u32(buf, at) {
  if (at + 4 > buf.length) throw new KafkaCompressionError("truncated compressed data");
  return ((buf[at] << 24) | (buf[at + 1] << 16) | (buf[at + 2] << 8) | buf[at + 3]) >>> 0;
}

function u32le(buf, at) {
  if (at + 4 > buf.length) throw new KafkaCompressionError("truncated lz4 frame");
  return (buf[at] | (buf[at + 1] << 8) | (buf[at + 2] << 16) | (buf[at + 3] << 24)) >>> 0;
}

function concat(parts, total) {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function s32(buf, at) {
  return (buf[at] << 24) | (buf[at + 1] << 16) | (buf[at + 2] << 8) | buf[at + 3];
}

function s32le(buf, at) {
  return buf[at] | (buf[at + 1] << 8) | (buf[at + 2] << 16) | (buf[at + 3] << 24);
}

// GZIPInputStream's input buffer as Kafka's GzipCompression sizes it: where the JDK looks
// for a next member after one ends depends on what it has read ahead.
const GZIP_JDK_BUFFER = 8 * 1024;

// The length of the gzip member header at data[pos], as the JDK's GZIPInputStream.readHeader
// reads it (reserved flag bits not looked at; a header CRC checked).
function gzipHeader(data, pos) {
  const n = data.length;
  const need = (at, k) => {
    if (n - at < k) throw new KafkaCompressionError("gzip: header cut short at byte " + at);
  };
  need(pos, 10);
  if (data[pos] !== 0x1f || data[pos + 1] !== 0x8b) throw new KafkaCompressionError("gzip: not in gzip format at byte " + pos);
  if (data[pos + 2] !== 8) throw new KafkaCompressionError("gzip: compression method " + data[pos + 2] + " is not deflate");
  const flg = data[pos + 3];
  let at = pos + 10;
  if (flg & 4) {  // FEXTRA
    need(at, 2);
    at += 2 + (data[at] | (data[at + 1] << 8));
    need(at, 0);
  }
  for (const bit of [8, 16]) {  // FNAME, FCOMMENT: zero-terminated
    if (flg & bit) {
      const end = data.indexOf(0, at);
      if (end < 0) throw new KafkaCompressionError("gzip: header cut short at byte " + n);
      at = end + 1;
    }
  }
  if (flg & 2) {  // FHCRC
    need(at, 2);
    if ((data[at] | (data[at + 1] << 8)) !== (crc32(data.subarray(pos, at)) & 0xffff)) {
      throw new KafkaCompressionError("gzip: corrupt header at byte " + pos + " (its CRC does not match)");
    }
    at += 2;
  }
  return at - pos;
}

// java.util.zip.GZIPInputStream over the bytes (kafkacodec.runtime.compression._gunzip):
// a member's header, raw deflate, trailer (CRC-32, length); then, only when the JDK looks
// at what follows (input it has not read yet, or more than 26 bytes of its 8 KiB buffer
// left after the deflate data), a next member if a header it takes starts there, else the
// end: anything else after a member is never read.
function gunzip(data, limit) {
  const size = data.length;
  let pos = gzipHeader(data, 0);
  let inPos = pos;  // how far the JDK has pulled bytes into its buffer
  const parts = [];
  let total = 0;
  for (;;) {
    let r;
    try {
      r = zlib.inflateRawSync(data.subarray(pos), { info: true, maxOutputLength: Math.max(1, limit - total) });
    } catch (err) {
      throw new KafkaCompressionError("gzip: " + err.message);
    }
    const member = new Uint8Array(r.buffer);
    const deflateEnd = pos + r.engine.bytesWritten;
    if (deflateEnd > inPos) {  // the 8 KiB fills that reached the deflate data's end
      inPos = Math.min(size, inPos + Math.ceil((deflateEnd - inPos) / GZIP_JDK_BUFFER) * GZIP_JDK_BUFFER);
    }
    const buffered = inPos - deflateEnd;  // read ahead past the deflate data (the trailer too)
    if (size - deflateEnd < 8) throw new KafkaCompressionError("gzip: member ends inside its trailer");
    if ((s32le(data, deflateEnd) >>> 0) !== crc32(member) || (s32le(data, deflateEnd + 4) >>> 0) !== member.length % 2 ** 32) {
      throw new KafkaCompressionError("gzip: corrupt trailer (its CRC or length does not match)");
    }
    total += member.length;
    if (total > limit) throw new KafkaCompressionError("gzip: inflates past the bound");
    parts.push(member);
    inPos = Math.max(inPos, deflateEnd + 8);
    if (!(size - inPos > 0 || buffered > 26)) return concat(parts, total);
    let header;
    try {
      header = gzipHeader(data, deflateEnd + 8);
    } catch (err) {
      if (err instanceof KafkaCompressionError) return concat(parts, total);  // "ignore any malformed"
      throw err;
    }
    pos = deflateEnd + 8 + header;
    inPos = Math.max(inPos, pos);
  }
}

// What Kafka asks of SnappyInputStream at a time (SnappyCompression.decompressionOutputSize).
const SNAPPY_KAFKA_READ = 2 * 1024;
const SNAPPY_MAX_CHUNK = 512 * 1024 * 1024;
const XERIAL_HEAD = s32(XERIAL, 0);

// snappy-java's SnappyInputStream as Kafka reads it (kafkacodec.runtime.compression._unsnappy):
// fewer than 16 bytes, or no magic, is one raw block; else chunks (an int32 length, a raw
// block) until fewer than 4 bytes are left; a length that is the magic's first 4 bytes
// starts a concatenated stream's header (version at least 1), or, when the rest of the
// magic does not follow, is 16 bytes skipped: the end when the read Kafka made (2 KiB of
// output at a time) had given nothing yet, else the stream goes on.
function unsnappy(data, limit) {
  if (data.length === 0) throw new KafkaCompressionError("snappy: empty data");
  const isXerial = data.length >= 16 && XERIAL.every((b, i) => data[i] === b);
  if (!isXerial) return snappyBlock(data, limit);
  const parts = [];
  let total = 0;
  let readStart = 0;
  let at = 16;
  while (data.length - at >= 4) {
    const n = s32(data, at);
    at += 4;
    if (n === XERIAL_HEAD) {
      if (data.length - at < 12) throw new KafkaCompressionError("snappy: header cut short at byte " + (at - 4));
      const magic = s32(data, at) === s32(XERIAL, 4);
      const version = s32(data, at + 4);
      at += 12;
      if (!magic) {
        if ((total - readStart) % SNAPPY_KAFKA_READ === 0) break;  // -1: the end
        readStart = total;
        continue;
      }
      if (version < 1) throw new KafkaCompressionError("snappy: stream of version " + version);
      continue;
    }
    if (n < 0 || n > SNAPPY_MAX_CHUNK || n > data.length - at) {
      throw new KafkaCompressionError("snappy: chunk at byte " + (at - 4) + " claims " + n + " bytes");
    }
    const block = snappyBlock(data.subarray(at, at + n), limit - total);
    parts.push(block);
    total += block.length;
    at += n;
  }
  return concat(parts, total);
}

// One raw snappy block as Google's snappy (which snappy-java calls) takes it: its length
// (a uvarint of at most 5 bytes), then literals and copies that fill exactly that many
// bytes and use every byte of the block (snappyjs, which takes bytes after the output is
// full, is not used: Kafka refuses them).
function snappyBlock(b, limit) {
  const end = b.length;
  let at = 0;
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    if (at >= end || shift > 28) throw new KafkaCompressionError("snappy: bad length");
    const c = b[at++];
    len += (c & 0x7f) * 2 ** shift;
    if (c < 0x80) break;
  }
  if (len > limit) throw new KafkaCompressionError("snappy: inflates past the bound");
  const out = new Uint8Array(len);
  let o = 0;
  while (at < end) {
    const tag = b[at++];
    let n;
    let offset;
    if ((tag & 3) === 0) {
      n = tag >> 2;
      if (n >= 60) {
        const bytes = n - 59;
        if (bytes > end - at) throw new KafkaCompressionError("snappy: bad literal");
        n = 0;
        for (let i = 0; i < bytes; i++) n += b[at++] * 2 ** (8 * i);
      }
      n += 1;
      if (n > end - at || o + n > len) throw new KafkaCompressionError("snappy: bad literal");
      out.set(b.subarray(at, at + n), o);
      o += n;
      at += n;
      continue;
    }
    if ((tag & 3) === 1) {
      if (at >= end) throw new KafkaCompressionError("snappy: cut short");
      n = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | b[at++];
    } else if ((tag & 3) === 2) {
      if (end - at < 2) throw new KafkaCompressionError("snappy: cut short");
      n = (tag >> 2) + 1;
      offset = b[at] | (b[at + 1] << 8);
      at += 2;
    } else {
      if (end - at < 4) throw new KafkaCompressionError("snappy: cut short");
      n = (tag >> 2) + 1;
      offset = s32le(b, at) >>> 0;
      at += 4;
    }
    if (offset === 0 || offset > o || o + n > len) throw new KafkaCompressionError("snappy: bad copy");
    for (let i = 0; i < n; i++, o++) out[o] = out[o - offset];
  }
  if (o !== len) throw new KafkaCompressionError("snappy: length mismatch");
  return out;
}

// Lz4BlockInputStream.readHeader: where the frame's blocks start.
function lz4Head(data, magic) {
  const n = data.length;
  if (n < 6) throw new KafkaCompressionError("lz4: frame header cut short");
  if (u32le(data, 0) !== LZ4_MAGIC) throw new KafkaCompressionError("lz4: not a frame (bad magic number)");
  const flg = data[4];
  const bd = data[5];
  if (flg & 3) throw new KafkaCompressionError("lz4: reserved descriptor bits must be 0");
  if (!(flg & 0x20)) throw new KafkaCompressionError("lz4: dependent blocks are not supported");
  if (flg >> 6 !== 1) throw new KafkaCompressionError("lz4: frame version " + (flg >> 6) + " is not supported");
  if (bd & 0x8f) throw new KafkaCompressionError("lz4: reserved block descriptor bits must be 0");
  if (((bd >> 4) & 7) < 4) throw new KafkaCompressionError("lz4: the block size must be 4 to 7");
  let at = 6;
  if (flg & 0x08) {  // a content size, skipped
    if (n - at < 8) throw new KafkaCompressionError("lz4: frame header cut short");
    at += 8;
  }
  if (n - at < 1) throw new KafkaCompressionError("lz4: frame header cut short");
  if (magic !== 0 && data[at] !== ((xxh32.hash(0, data, 4, at - 4) >>> 8) & 0xff)) {
    throw new KafkaCompressionError("lz4: frame descriptor corrupted (its checksum does not match)");
  }
  return at + 1;
}

// One LZ4 block into dst (its length: the frame's largest block) as liblz4's
// LZ4_decompress_safe decides it (lib/lz4.c LZ4_decompress_generic: full block, no
// dictionary), the decompressor lz4-java calls for Kafka's Lz4BlockInputStream; the Go
// package's lz4Block states the same rules. A last sequence's literals end the block
// whatever its match length nibble says; literals that end within 8 bytes of the block's
// end must end it; a match may not end within 5 bytes of the bound; a match of offset 0 is
// zeros; both of liblz4's loops are followed (the fast one while the output is 64 bytes or
// more from the bound). The bytes decoded, or -1.
function lz4Block(src, start, end, dst) {
  const iend = end;
  const oend = dst.length;
  if (oend === 0) return end - start === 1 && src[start] === 0 ? 0 : -1;
  if (end === start) return -1;
  let ip = start;
  let op = 0;
  const varLen = (limit, initial) => {
    if (initial && ip >= limit) return -1;
    let n = 0;
    for (;;) {
      if (ip >= iend) return -1;
      const b = src[ip++];
      n += b;
      if (ip > limit) return -1;
      if (b !== 255) return n;
    }
  };
  const copyMatch = (match, length) => {
    if (match === op) dst.fill(0, op, op + length);  // offset 0: liblz4 writes zeros
    else for (let i = 0; i < length; i++) dst[op + i] = dst[match + i];
  };
  let fast = oend - op >= 64;
  let token = 0;
  let length = 0;
  let match = 0;
  for (;;) {
    let step = "next";
    if (fast) {
      if (ip >= iend) return -1;
      token = src[ip++];
      length = token >> 4;
      if (length === 15) {
        const addl = varLen(iend - 15, true);
        if (addl < 0) return -1;
        length += addl;
        if (op + length > oend - 32 || ip + length > iend - 32) step = "literals";
      } else if (ip > iend - 17) {
        step = "literals";
      }
      if (step === "next") {
        dst.set(src.subarray(ip, ip + length), op);
        ip += length;
        op += length;
        const offset = src[ip] | (src[ip + 1] << 8);
        ip += 2;
        match = op - offset;
        length = token & 15;
        if (length === 15) {
          const addl = varLen(iend - 5 + 1, false);
          if (addl < 0) return -1;
          length += addl + 4;
        } else {
          length += 4;
        }
        if (op + length >= oend - 64) {
          step = "match";
        } else {
          if (match < 0) return -1;
          copyMatch(match, length);
          op += length;
          continue;
        }
      }
      fast = false;
    }
    if (step === "next") {  // the safe loop
      if (ip >= iend) return -1;
      token = src[ip++];
      length = token >> 4;
      if (length !== 15 && ip < iend - 16 && op <= oend - 32) {  // the shortcut
        dst.set(src.subarray(ip, ip + length), op);
        op += length;
        ip += length;
        length = token & 15;
        const offset = src[ip] | (src[ip + 1] << 8);
        ip += 2;
        match = op - offset;
        if (length !== 15 && offset >= 8 && match >= 0) {
          copyMatch(match, length + 4);
          op += length + 4;
          continue;
        }
        step = "matchLength";
      } else {
        if (length === 15) {
          const addl = varLen(iend - 15, true);
          if (addl < 0) return -1;
          length += addl;
        }
        step = "literals";
      }
    }
    if (step === "literals") {
      const cpy = op + length;
      if (cpy > oend - 12 || ip + length > iend - 8) {  // the last sequence
        if (ip + length !== iend || cpy > oend) return -1;
        dst.set(src.subarray(ip, iend), op);
        return cpy;
      }
      dst.set(src.subarray(ip, ip + length), op);
      ip += length;
      op = cpy;
      const offset = src[ip] | (src[ip + 1] << 8);
      ip += 2;
      match = op - offset;
      length = token & 15;
      step = "matchLength";
    }
    if (step === "matchLength") {
      if (length === 15) {
        const addl = varLen(iend - 5 + 1, false);
        if (addl < 0) return -1;
        length += addl;
      }
      length += 4;
    }
    if (match < 0) return -1;
    const cpy = op + length;
    if (cpy > oend - 5) return -1;  // the last 5 bytes must be literals
    copyMatch(match, length);
    op = cpy;
  }
}

function unlz4(data, limit, magic) {
  // Kafka's Lz4BlockInputStream over one LZ4 frame (kafkacodec.runtime.compression._unlz4
  // states the same rules): FLG with no reserved bit, independent blocks, version 1; BD
  // with no reserved bit and a block size of 64 KiB to 4 MiB; the descriptor's checksum
  // but for magic 0 (KAFKA-3160); blocks to the end mark (a size of 0 whatever its top
  // bit), a block checksum checked, the content checksum not; a block of no bytes ends the
  // stream (Kafka's ChunkedBytesStream), and nothing after the end mark is read. The frame
  // is read here (lz4js reads block checksums at the wrong place), blocks by lz4Block.
  const parts = [];
  let total = 0;
  const n = data.length;
  let at = lz4Head(data, magic);
  const flg = data[4];
  const sizeId = (data[5] >> 4) & 7;
  const maxBlock = 1 << (2 * sizeId + 8);
  for (;;) {
    if (n - at < 4) throw new KafkaCompressionError("lz4: frame ends before its end mark");
    const word = u32le(data, at);
    at += 4;
    const size = word & 0x7fffffff;
    if (size === 0) {  // the end mark
      if ((flg & 0x04) && n - at < 4) throw new KafkaCompressionError("lz4: frame ends inside its content checksum");
      break;
    }
    if (size > maxBlock) throw new KafkaCompressionError("lz4: block of " + size + " bytes, past the frame's " + maxBlock);
    if (n - at < size) throw new KafkaCompressionError("lz4: frame ends inside a block");
    let block;
    if (word & 0x80000000) {
      block = data.slice(at, at + size);
    } else {
      const dst = new Uint8Array(maxBlock);
      const got = lz4Block(data, at, at + size, dst);
      if (got < 0) throw new KafkaCompressionError("lz4: corrupt block at byte " + at);
      block = dst.subarray(0, got);
    }
    const blockAt = at;
    at += size;
    if (flg & 0x10) {  // a block checksum
      if (n - at < 4) throw new KafkaCompressionError("lz4: frame ends inside a block checksum");
      if (xxh32.hash(0, data, blockAt, size) !== u32le(data, at)) throw new KafkaCompressionError("lz4: block checksum mismatch");
      at += 4;
    }
    if (block.length === 0) break;  // a block of no bytes ends the stream
    total += block.length;
    if (total > limit) throw new KafkaCompressionError("lz4: inflates past the bound");
    parts.push(block);
  }
  return concat(parts, total);
}

const ZSTD_MAGIC = 0xfd2fb528;
const ZSTD_SKIPPABLE = 0x184d2a50;  // to 0x184d2a5f
// How much input zstd-jni's ZstdInputStreamNoFinalizer reads at a time (ZSTD_DStreamInSize).
const ZSTD_JNI_READ = 128 * 1024 + 3;

// Where the frame (or skippable frame) at data[pos] ends, from its headers and its blocks'
// headers (RFC 8878); null when the data ends inside a magic number (zstd waits for more);
// an error for bytes that start no frame or a block of the reserved type. The end may lie
// past the data (the frame is cut short). kafkacodec.runtime.compression._zstd_frame_end.
function zstdFrameEnd(data, pos) {
  const n = data.length;
  const head = data.subarray(pos, pos + 4);
  const magicBytes = [0x28, 0xb5, 0x2f, 0xfd];
  if (head.length < 4 || (n - pos < 5 && head.every((b, i) => b === magicBytes[i]))) {
    const prefix = head.every((b, i) => b === magicBytes[i]);
    const skip = head.length > 0 && head[0] >= 0x50 && head[0] <= 0x5f && head.every((b, i) => i === 0 || b === [0x50, 0x2a, 0x4d, 0x18][i]);
    if (prefix || skip) return null;
    throw new KafkaCompressionError("zstd: data holds no frame at byte " + pos);
  }
  const magic = s32le(data, pos) >>> 0;
  if (((magic & 0xfffffff0) >>> 0) === ZSTD_SKIPPABLE) {
    if (n - pos < 8) return pos + 8;
    return pos + 8 + (s32le(data, pos + 4) >>> 0);
  }
  if (magic !== ZSTD_MAGIC) throw new KafkaCompressionError("zstd: data holds no frame at byte " + pos);
  const fhd = data[pos + 4];
  const single = (fhd >> 5) & 1;
  let at = pos + 4 + 1 + (1 - single) + [0, 1, 2, 4][fhd & 3] + [single, 2, 4, 8][fhd >> 6];
  for (;;) {
    if (n - at < 3) return at + 3;
    const bh = data[at] | (data[at + 1] << 8) | (data[at + 2] << 16);
    const kind = (bh >> 1) & 3;
    if (kind === 3) throw new KafkaCompressionError("zstd: block of the reserved type at byte " + at);
    at += 3 + (kind === 1 ? 1 : bh >> 3);  // an RLE block holds one byte
    if (bh & 1) return at + 4 * ((fhd >> 2) & 1);  // and its content checksum
  }
}

// zstd-jni's ZstdInputStreamNoFinalizer as Kafka reads it (kafkacodec.runtime.compression
// _unzstd): frames one after the other, empty and skippable ones giving nothing; at the end
// of the data after a frame cut short (what it gave is kept) or inside a magic number: the
// end if a frame ended since zstd-jni last read input (131075 bytes at a time), else
// "Truncated source".
// What a frame at data[pos] cut short inside a raw block holds of that block: libzstd's stream
// (zstd-jni's) hands a raw block's bytes over as they come, where fzstd waits for the whole
// block; empty when the cut is elsewhere (the Go package's zstdCutRaw).
function zstdCutRaw(data, pos) {
  const n = data.length;
  const fhd = data[pos + 4];
  const single = (fhd >> 5) & 1;
  let at = pos + 4 + 1 + (1 - single) + [0, 1, 2, 4][fhd & 3] + [single, 2, 4, 8][fhd >> 6];
  while (n - at >= 3) {
    const bh = data[at] | (data[at + 1] << 8) | (data[at + 2] << 16);
    const kind = (bh >> 1) & 3;
    let size = bh >>> 3;
    if (kind === 0 && at + 3 + size > n) return data.subarray(at + 3, n);
    if (kind === 1) size = 1;
    if ((bh & 1) || at + 3 + size > n) break;
    at += 3 + size;
  }
  return data.subarray(0, 0);
}

function unzstd(data, limit) {
  const n = data.length;
  const parts = [];
  let total = 0;
  let done = -1;  // where the last frame that ended ends
  let pos = 0;
  const frame = (bytes, whole) => {
    try {
      const stream = new fzstd.Decompress((chunk) => {
        total += chunk.length;
        if (total > limit) throw new KafkaCompressionError("zstd: inflates past the bound");
        parts.push(chunk);
      });
      stream.push(bytes, whole);
    } catch (err) {
      if (err instanceof KafkaCompressionError) throw err;
      throw new KafkaCompressionError("zstd: " + err.message);
    }
  };
  while (pos < n) {
    const end = zstdFrameEnd(data, pos);
    if (end === null) break;
    const skippable = ((s32le(data, pos) & 0xfffffff0) >>> 0) === ZSTD_SKIPPABLE;
    if (end > n) {
      if (!skippable) {
        frame(data.subarray(pos, n), false);  // what a frame cut short gives
        const raw = zstdCutRaw(data, pos);  // and of a raw block cut short, what is there
        if (raw.length) {
          total += raw.length;
          if (total > limit) throw new KafkaCompressionError("zstd: inflates past the bound");
          parts.push(raw);
        }
      }
      break;
    }
    if (!skippable) frame(data.subarray(pos, end), true);
    done = end;
    pos = end;
  }
  if (pos >= n) return concat(parts, total);
  const lastRead = Math.floor((n - 1) / ZSTD_JNI_READ) * ZSTD_JNI_READ;
  if (done > lastRead) return concat(parts, total);
  throw new KafkaCompressionError("zstd: frame at byte " + pos + " is cut short (truncated source)");
}

const CODECS = { 1: gunzip, 2: unsnappy, 3: unlz4, 4: unzstd };


// What Kafka reads of a compressed records region that holds no record
// (kafkacodec.runtime.compression.check_head): DefaultRecordBatch's streaming iterator opens
// the codec's stream, whose constructor reads the gzip member header, the LZ4 frame header,
// snappy-java's header or, when the bytes do not start with it, the one raw block it
// decompresses whole; zstd-jni's reads nothing. Then no record is read.
function checkHead(codec, data, magic) {
  if (codec === 1) gzipHeader(data, 0);
  else if (codec === 3) lz4Head(data, magic);
  else if (codec === 2 && !(data.length >= 16 && XERIAL.every((b, i) => data[i] === b))) {
    unsnappy(data, KafkaCompression.maxSize);
  }
}

class KafkaCompression {
  // records: how many records a v2 batch says its region holds (undefined for a legacy
  // wrapper); of a region said to hold none Kafka reads the codec's head alone.
  constructor(codec, magic, records) {
    this.codec = codec;
    this.magic = magic;
    this.records = records;
  }

  decode(data) {
    const fn = CODECS[this.codec];
    if (this.codec !== 0 && (!fn || (this.codec === 4 && this.magic < 2))) {
      throw new KafkaCompressionError(`unknown compression codec ${this.codec} for magic ${this.magic}`);
    }
    if (this.records !== undefined && Number(this.records) === 0) {
      checkHead(this.codec, data, this.magic);
      return data.subarray(0, 0);
    }
    if (this.codec === 0) return data;
    return fn(data, KafkaCompression.maxSize, this.magic);
  }
}
KafkaCompression.maxSize = 128 * 1024 * 1024;

module.exports = { KafkaCompression, KafkaCompressionError };
