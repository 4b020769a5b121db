// A fix for the official Kaitai JavaScript runtime (npm kaitai-struct 0.11.0): its readS8be
// and readS8le compute a negative int64 as -(2^32 * ~hi + ~lo) - 1 with JavaScript's 32-bit
// `^`, which makes ~lo negative whenever the low 32 bits are below 2^31, so such a value
// comes out 2^32 too large (-2^32 reads as 0, Long.MIN_VALUE as -2^63 + 2^32). Kafka
// writes negative int64s (a broker epoch, a timestamp before 1970, -2^63 as a sentinel), so
// the schemas' parsers need it right. Require this module once, before parsing:
//
//   require("./KaitaiStream64");
//
// It replaces the two readers with hi * 2^32 + lo (hi signed, lo unsigned), rounded once to
// the nearest double: exact up to 2^53 in magnitude, the nearest double beyond, as every
// 64-bit integer of this runtime is. Nothing else changes.
"use strict";
const KaitaiStream = require("kaitai-struct/KaitaiStream");

KaitaiStream.prototype.readS8be = function () {
  this.ensureBytesLeft(8);
  const hi = this.readS4be();
  const lo = this.readU4be();
  return hi * 0x100000000 + lo;
};

KaitaiStream.prototype.readS8le = function () {
  this.ensureBytesLeft(8);
  const lo = this.readU4le();
  const hi = this.readS4le();
  return hi * 0x100000000 + lo;
};

module.exports = KaitaiStream;
