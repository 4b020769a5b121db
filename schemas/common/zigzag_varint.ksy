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
  Kaitai target uses. Arithmetic is by multiplication, not shifts, so that targets with
  32-bit shift operators (JavaScript) stay exact up to 2^53.
doc-ref:
  - org.apache.kafka.common.utils.ByteUtils#readVarint
  - https://protobuf.dev/programming-guides/encoding/#signed-ints
params:
  - id: max_len
    type: u1
    doc: "Most bytes allowed: 5 for a varint (int32), 10 for a varlong (int64)."
seq:
  - id: groups
    type: 'group(_index, _index == 0 ? 1 : groups[_index - 1].multiplier * 128, _index == 0 ? 0 : groups[_index - 1].acc)'
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
        type: u8
        doc: 128 to the power of idx.
      - id: prev_acc
        type: u8
        doc: The unsigned value accumulated from the groups before this one.
    seq:
      - id: b
        type: u1
        valid:
          expr: idx < _parent.max_len
    instances:
      has_next:
        value: (b & 0x80) != 0
        doc: Whether another group follows.
      acc:
        value: prev_acc + (b & 0x7f) * multiplier
        doc: The unsigned value accumulated up to and including this group.
instances:
  len:
    value: groups.size
    doc: Bytes the encoding takes.
  raw:
    value: groups.last.acc
    doc: The unsigned (zig-zag encoded) value.
  value:
    value: 'raw % 2 == 0 ? raw / 2 : -((raw + 1) / 2)'
    doc: The decoded signed value.
