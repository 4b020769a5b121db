// The schemas' custom `process: kafka_compression(codec, magic)` routine for the official
// Kaitai compiler's JavaScript output (Node). Put this folder on NODE_PATH (the compiled
// parsers require('KafkaCompression')) and `npm install` its package.json.
//
// Codecs as Kafka writes them (FORMATS.md 3): 1 gzip (members may be concatenated),
// 2 snappy (xerial framing, or one raw block), 3 lz4 (frame format; magic 0 frames carry
// Kafka's old, wrong header checksum, which is not checked), 4 zstd (magic 2 only).
// A region that inflates past KafkaCompression.maxSize (128 MB) is refused.
"use strict";
const zlib = require("zlib");
const SnappyJS = require("snappyjs");
const lz4 = require("lz4js");
const xxh32 = require("lz4js/xxh32.js");
const fzstd = require("fzstd");

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

function gunzip(data, limit) {
  try {
    return new Uint8Array(zlib.gunzipSync(data, { maxOutputLength: limit }));
  } catch (err) {
    throw new KafkaCompressionError("gzip: " + err.message);
  }
}

function unsnappy(data, limit) {
  const isXerial = data.length >= 16 && XERIAL.every((b, i) => data[i] === b);
  if (!isXerial) return snappyBlock(data, limit);
  const parts = [];
  let total = 0;
  for (let at = 16; at < data.length; ) {
    const n = u32(data, at);
    if (at + 4 + n > data.length) throw new KafkaCompressionError("snappy: truncated xerial block");
    const block = snappyBlock(data.subarray(at + 4, at + 4 + n), limit - total);
    parts.push(block);
    total += block.length;
    at += 4 + n;
  }
  return concat(parts, total);
}

function snappyBlock(block, limit) {
  try {
    return new Uint8Array(SnappyJS.uncompress(block, limit));
  } catch (err) {
    throw new KafkaCompressionError("snappy: " + err.message);
  }
}

function unlz4(data, limit, magic) {
  // Kafka's Lz4BlockInputStream over one LZ4 frame (kafkacodec.runtime.compression._unlz4
  // states the same rules): FLG with no reserved bit, independent blocks, version 1; BD
  // with no reserved bit and a block size of 64 KiB to 4 MiB; the descriptor's checksum
  // but for magic 0 (KAFKA-3160); blocks to the end mark (a size of 0 whatever its top
  // bit), a block checksum checked, the content checksum not; a block of no bytes ends the
  // stream (Kafka's ChunkedBytesStream), and nothing after the end mark is read. The frame
  // is read here (lz4js reads block checksums at the wrong place); lz4js decodes blocks.
  const parts = [];
  let total = 0;
  const n = data.length;
  if (n < 6) throw new KafkaCompressionError("lz4: frame header cut short");
  if (u32le(data, 0) !== LZ4_MAGIC) throw new KafkaCompressionError("lz4: not a frame (bad magic number)");
  const flg = data[4];
  const bd = data[5];
  if (flg & 3) throw new KafkaCompressionError("lz4: reserved descriptor bits must be 0");
  if (!(flg & 0x20)) throw new KafkaCompressionError("lz4: dependent blocks are not supported");
  if (flg >> 6 !== 1) throw new KafkaCompressionError("lz4: frame version " + (flg >> 6) + " is not supported");
  if (bd & 0x8f) throw new KafkaCompressionError("lz4: reserved block descriptor bits must be 0");
  const sizeId = (bd >> 4) & 7;
  if (sizeId < 4) throw new KafkaCompressionError("lz4: the block size must be 4 to 7");
  let at = 6;
  if (flg & 0x08) {  // a content size, skipped
    if (n - at < 8) throw new KafkaCompressionError("lz4: frame header cut short");
    at += 8;
  }
  if (n - at < 1) throw new KafkaCompressionError("lz4: frame header cut short");
  if (magic !== 0 && data[at] !== ((xxh32.hash(0, data, 4, at - 4) >>> 8) & 0xff)) {
    throw new KafkaCompressionError("lz4: frame descriptor corrupted (its checksum does not match)");
  }
  at += 1;
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
      let got;
      try {
        got = lz4.decompressBlock(data, dst, at, size, 0);
      } catch (err) {
        throw new KafkaCompressionError("lz4: " + err.message);
      }
      if (!(got >= 0 && got <= maxBlock)) throw new KafkaCompressionError("lz4: corrupt block");
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

function unzstd(data, limit) {
  const parts = [];
  let total = 0;
  try {
    const stream = new fzstd.Decompress((chunk) => {
      total += chunk.length;
      if (total > limit) throw new KafkaCompressionError("zstd: inflates past the bound");
      parts.push(chunk);
    });
    stream.push(data, true);
  } catch (err) {
    if (err instanceof KafkaCompressionError) throw err;
    throw new KafkaCompressionError("zstd: " + err.message);
  }
  return concat(parts, total);
}

const CODECS = { 1: gunzip, 2: unsnappy, 3: unlz4, 4: unzstd };


class KafkaCompression {
  constructor(codec, magic) {
    this.codec = codec;
    this.magic = magic;
  }

  decode(data) {
    if (this.codec === 0) return data;
    const fn = CODECS[this.codec];
    if (!fn || (this.codec === 4 && this.magic < 2)) {
      throw new KafkaCompressionError(`unknown compression codec ${this.codec} for magic ${this.magic}`);
    }
    return fn(data, KafkaCompression.maxSize, this.magic);
  }
}
KafkaCompression.maxSize = 128 * 1024 * 1024;

module.exports = { KafkaCompression, KafkaCompressionError };
