// The CRC checks the schemas cannot express, for the official Kaitai compiler's
// JavaScript output. Each schema with a CRC exposes the range it covers as two instances,
// crcFrom and crcTo (byte positions from the start of the batch or message): a v2 batch's
// CRC-32C (Castagnoli) covers attributes to its end, a legacy message's CRC-32 (IEEE)
// covers magic to its end (FORMATS.md 2.1, 2.2). The CRCs are computed here, table-driven,
// with no dependency.
"use strict";

function table(poly) {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ poly : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

const CASTAGNOLI = table(0x82f63b78);
const IEEE = table(0xedb88320);

function crc(t, bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const crc32c = (bytes) => crc(CASTAGNOLI, bytes);
const crc32 = (bytes) => crc(IEEE, bytes);

// The stored and computed CRC of a parsed batch or legacy message (`body`) whose first
// byte is at `pos` of `buf` (a Uint8Array): {stored, computed, ok}.
function bodyCrc(body, buf, pos) {
  const covered = buf.subarray(pos + body.crcFrom, pos + body.crcTo);
  const computed = body.magic === 2 ? crc32c(covered) : crc32(covered);
  return { stored: body.crc, computed, ok: body.crc === computed };
}

// Every whole top-level entry of a parsed KafkaLog, in order: {position, stored, computed,
// ok}. A partial entry that ends the log (its `partial` bytes, unread) has no CRC to check.
function checkLog(kafkaLog, buf) {
  const out = [];
  let pos = 0;
  for (const entry of kafkaLog.entries) {
    if (entry.partial != null) break;
    out.push({ position: pos, ...bodyCrc(entry.body, buf, pos) });
    pos += 12 + entry.length;
  }
  return out;
}

module.exports = { crc32c, crc32, bodyCrc, checkLog };
