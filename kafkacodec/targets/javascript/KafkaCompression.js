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

function unlz4(data, limit) {
  // The frame is read here (lz4js reads block checksums at the wrong place); lz4js
  // decodes the blocks.
  const parts = [];
  let total = 0;
  let at = 0;
  while (at < data.length) {
    if (u32le(data, at) !== LZ4_MAGIC) throw new KafkaCompressionError("lz4: not a frame");
    const flags = data[at + 4];
    if (flags === undefined || flags >> 6 !== 1) throw new KafkaCompressionError("lz4: unknown frame version");
    const blockSum = (flags & 0x10) !== 0;
    const contentSum = (flags & 0x04) !== 0;
    const maxBlock = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20][(data[at + 5] >> 4) & 7];
    if (!maxBlock) throw new KafkaCompressionError("lz4: bad block size");
    at += 6 + ((flags & 0x08) ? 8 : 0) + ((flags & 0x01) ? 4 : 0) + 1;
    for (;;) {
      const word = u32le(data, at);
      at += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      if (at + size > data.length) throw new KafkaCompressionError("lz4: truncated block");
      let block;
      if (word & 0x80000000) {
        block = data.slice(at, at + size);
      } else {
        const dst = new Uint8Array(maxBlock);
        let n;
        try {
          n = lz4.decompressBlock(data, dst, at, size, 0);
        } catch (err) {
          throw new KafkaCompressionError("lz4: " + err.message);
        }
        if (!(n >= 0 && n <= maxBlock)) throw new KafkaCompressionError("lz4: corrupt block");
        block = dst.subarray(0, n);
      }
      total += block.length;
      if (total > limit) throw new KafkaCompressionError("lz4: inflates past the bound");
      parts.push(block);
      at += size + (blockSum ? 4 : 0);
    }
    if (contentSum) at += 4;
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
    return fn(data, KafkaCompression.maxSize);
  }
}
KafkaCompression.maxSize = 128 * 1024 * 1024;

module.exports = { KafkaCompression, KafkaCompressionError };
