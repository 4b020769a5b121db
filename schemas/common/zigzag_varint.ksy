meta:
  id: zigzag_varint
  title: Zig-zag variable-length integer (protobuf style), as Kafka writes it
  license: Apache-2.0
  endian: be
  -kafkacodec-primitive: zigzag_varint
doc: |
  A signed integer in protobuf's zig-zag encoding: the value `n` is mapped to
  `(n << 1) ^ (n >> 63)` so that small magnitudes of either sign are small, then written
  7 bits a byte, least significant group first, with the high bit of each byte set when
  another byte follows. Kafka's varint (int32) takes at most 5 bytes and its varlong
  (int64) at most 10; a longer encoding, or a value out of range, is corrupt.

  kafkacodec's generator reads this type inline (it is marked
  `-kafkacodec-primitive: zigzag_varint`); the Kaitai definition below is what every other
  Kaitai target uses, and it computes what Kafka computes in each of them:

  - 64 bits everywhere: every instance is cast to s8 (a Kaitai expression of integers is
    otherwise a 32-bit int in Java and C++, which wrapped timestamp deltas above 2^31 ms).
  - No unsigned 64-bit arithmetic: the zig-zag value `raw` can reach 2^64 - 1, which a
    signed 64-bit integer cannot hold, so the groups accumulate `raw >> 1` directly (the
    first group gives its bits 1-6, group i > 0 its 7 bits times 64 * 128^(i-1)); the
    value is that, or -(that) - 1 when bit 0 of the first byte is set. Nothing overflows:
    the largest sum is 2^63 - 1.
  - Bounds as Kafka's: at most max_len bytes, and the last allowed byte holds only the
    bits the type has (a varint's fifth byte at most 0x0f, a varlong's tenth at most 0x01),
    so a longer or out-of-range encoding is refused in every target.
  - JavaScript numbers are doubles: a value beyond +-2^53 (a varlong only) comes out
    rounded there, as Kaitai's JavaScript runtime reads every 64-bit integer.

  Arithmetic is by multiplication and division, not shifts, so that targets with 32-bit
  shift operators (JavaScript) stay exact up to 2^53.
doc-ref:
  - org.apache.kafka.common.utils.ByteUtils#readVarint
  - org.apache.kafka.common.utils.ByteUtils#readVarlong
  - https://protobuf.dev/programming-guides/encoding/#signed-ints
params:
  - id: max_len
    type: u1
    doc: "Most bytes allowed: 5 for a varint (int32), 10 for a varlong (int64)."
seq:
  - id: groups
    type: 'group(_index, _index == 0 ? 1 : (_index == 1 ? 64 : groups[_index - 1].multiplier * 128), _index == 0 ? 0 : groups[_index - 1].acc)'
    repeat: until
    repeat-until: not _.has_next
types:
  group:
    doc: One byte of the encoding; 7 bits of payload and a continuation flag.
    params:
      - id: idx
        type: s4
        doc: Index of this group, 0 for the least significant.
      - id: multiplier
        type: s8
        doc: What this group's 7 bits are worth in `raw >> 1` (64 * 128^(idx-1); unused for group 0).
      - id: prev_acc
        type: s8
        doc: "`raw >> 1` accumulated from the groups before this one."
    seq:
      - id: b
        type: u1
        valid:
          expr: 'idx < _parent.max_len - 1 or _ <= (_parent.max_len == 5 ? 0x0f : 0x01)'
    instances:
      has_next:
        value: (b & 0x80) != 0
        doc: Whether another group follows.
      acc:
        value: '(prev_acc + (idx == 0 ? (b & 0x7f) / 2 : (b & 0x7f) * multiplier)).as<s8>'
        doc: "`raw >> 1` accumulated up to and including this group."
instances:
  len:
    value: groups.size
    doc: Bytes the encoding takes.
  negative:
    value: (groups[0].b & 1) != 0
    doc: Bit 0 of the zig-zag value, the sign.
  value:
    value: '(negative ? -groups.last.acc - 1 : groups.last.acc).as<s8>'
    doc: The decoded signed value.
