meta:
  id: unsigned_varint
  title: Unsigned variable-length integer, as Kafka writes compact lengths and tags
  license: Apache-2.0
  endian: be
  -kafkacodec-primitive: unsigned_varint
doc: |
  An unsigned integer written 7 bits a byte, least significant group first, with the high
  bit of each byte set when another byte follows (protobuf's varint, unsigned LEB128).
  Kafka writes its flexible versions' lengths (compact strings, bytes and arrays, as the
  length plus one, 0 for null), tagged fields' counts, tags and sizes, and the frame of a
  metadata record this way. An unsigned varint (uint32) takes at most 5 bytes and an
  unsigned varlong at most 10; a longer encoding, or a value that does not fit, is corrupt
  (Kafka's readUnsignedVarint wraps a fifth byte above 0x0f into its int).

  kafkacodec's generator reads this type inline (it is marked
  `-kafkacodec-primitive: unsigned_varint`); the Kaitai definition below is what every
  other Kaitai target uses, and it computes what Kafka computes in each of them: every
  instance is cast to u8 (a Kaitai expression of integers is otherwise a 32-bit int in Java
  and C++), the last allowed byte holds only the bits the type has (an unsigned varint's
  fifth byte at most 0x0f, a varlong's tenth at most 0x01), and no longer encoding is
  read. Java has no unsigned 64-bit type: as for Kaitai's u8, a varlong above 2^63 - 1
  reads there as the negative long with the same bits; JavaScript numbers are doubles,
  exact up to 2^53.

  Arithmetic is by multiplication, not shifts, so that targets with 32-bit shift operators
  (JavaScript) stay exact up to 2^53.
doc-ref:
  - org.apache.kafka.common.utils.ByteUtils#readUnsignedVarint
  - https://protobuf.dev/programming-guides/encoding/#varints
params:
  - id: max_len
    type: u1
    doc: "Most bytes allowed: 5 for an unsigned varint (uint32), 10 for an unsigned varlong."
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
        doc: The value accumulated from the groups before this one.
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
        value: '(prev_acc + (b & 0x7f) * multiplier).as<u8>'
        doc: The value accumulated up to and including this group.
instances:
  len:
    value: groups.size
    doc: Bytes the encoding takes.
  value:
    value: groups.last.acc
    doc: The integer.
