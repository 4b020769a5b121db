// The CRC checks the schemas cannot express, for the official Kaitai compiler's
// JavaScript output: a v2 batch's CRC-32C covers `attributes` (byte 21) to its end, a
// legacy message's CRC-32 covers `magic` (byte 16) to its end (FORMATS.md 2.1, 2.2).
"use strict";
const CRC32 = require("crc-32");
const CRC32C = require("crc-32/crc32c");

function u32(buf, at) {
  return ((buf[at] << 24) | (buf[at + 1] << 16) | (buf[at + 2] << 8) | buf[at + 3]) >>> 0;
}

// The stored and computed CRC of the entry (batch or legacy message) at `pos` of a log or
// record set `buf` (a Uint8Array).
function entryCrc(buf, pos) {
  const size = 12 + (u32(buf, pos + 8) | 0);
  const magic = buf[pos + 16];
  if (magic === 2) {
    return { stored: u32(buf, pos + 17), computed: CRC32C.buf(buf.subarray(pos + 21, pos + size)) >>> 0, size };
  }
  return { stored: u32(buf, pos + 12), computed: CRC32.buf(buf.subarray(pos + 16, pos + size)) >>> 0, size };
}

// Every whole top-level entry of a parsed KafkaLog, in order: {position, stored, computed,
// ok}. A partial entry that ends the log (its `partial` bytes, unread) has no CRC to check.
function checkLog(kafkaLog, buf) {
  const out = [];
  let pos = 0;
  for (let i = 0; i < kafkaLog.entries.length; i++) {
    if (kafkaLog.entries[i].partial != null) break;
    const c = entryCrc(buf, pos);
    out.push({ position: pos, stored: c.stored, computed: c.computed, ok: c.stored === c.computed });
    pos += c.size;
  }
  return out;
}

module.exports = { entryCrc, checkLog };
