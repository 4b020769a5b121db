// Package kafkacodec reads Apache Kafka's on-disk and wire record formats (legacy message
// sets magic 0 and 1, the v2 record batch, records, control records, the offset, time and
// transaction indexes) and the payloads of Kafka's internal topics, from the same Kaitai
// Struct schemas as kafkacodec's Python parsers (the .go files named after them are written
// by kafkacodec's generator: do not edit them), with the same checks: CRC-32C and CRC-32,
// Kafka's bounds on lengths, counts and varints, and the codecs Kafka compresses with.
//
// Every parser reads a byte slice and returns an *Error (its Check says which kind) that
// names the schema, the byte and what was wrong; byte fields are slices of the input.
package kafkacodec

import (
	"errors"
	"fmt"
	"hash/crc32"
)

// Check says what an Error found wrong, as kafkacodec's Python errors are classed.
type Check string

const (
	// Truncated: the data ends inside a structure (TruncatedError).
	Truncated Check = "truncated"
	// Checksum: a stored CRC does not match the bytes (ChecksumError).
	Checksum Check = "checksum"
	// Invalid: a value breaks the schema's rule (ValidationError).
	Invalid Check = "invalid"
	// Corrupt: a length, count, varint or compressed payload is impossible (CorruptRecordError).
	Corrupt Check = "corrupt"
	// Length: a length field disagrees with the fields it counts (LengthMismatchError).
	Length Check = "length"
)

// Error is what a parser reports about bad input: where (the schema and the path of the
// type or field), the byte position, the kind of check and what was wrong.
type Error struct {
	Where string
	Pos   int
	Check Check
	Msg   string
	Err   error // the codec's error, for a payload that does not decompress
}

func (e *Error) Error() string {
	return fmt.Sprintf("byte %d: %s [%s]", e.Pos, e.Msg, e.Where)
}

func (e *Error) Unwrap() error { return e.Err }

// IsChecksum tells whether err is (or wraps) a CRC mismatch.
func IsChecksum(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Check == Checksum
}

func fail(check Check, where string, pos int, format string, args ...any) *Error {
	return &Error{Where: where, Pos: pos, Check: check, Msg: fmt.Sprintf(format, args...)}
}

func truncated(where string, pos, end, needed int) error {
	if needed > 0 {
		return fail(Truncated, where, pos, "data ends inside the structure (%d bytes needed, %d left)", needed, max(end-pos, 0))
	}
	return fail(Truncated, where, pos, "data ends inside the structure")
}

func trailing(where string, pos, end int) error {
	return fail(Corrupt, where, pos, "%d unexpected bytes after the structure", end-pos)
}

func invalid(where string, pos int, name string, value any, msg string) error {
	return fail(Invalid, where, pos, "%s %s, got %v", name, msg, value)
}

func badSize(where string, pos int, name string, n int64, left int) error {
	if n < 0 {
		return fail(Corrupt, where, pos, "size of %s is negative (%d)", name, n)
	}
	return fail(Truncated, where, pos, "%s is %d bytes long, %d left", name, n, left)
}

func badLength(where string, pos int, name string, n int64, left int) error {
	if n < 0 {
		return fail(Corrupt, where, pos, "%s is negative (%d)", name, n)
	}
	return fail(Truncated, where, pos, "%s says %d bytes follow, %d left", name, n, left)
}

func badCount(where string, pos int, name string, count int64, left, least int) error {
	if least == 0 {
		return fail(Corrupt, where, pos, "count of %s is negative (%d)", name, count)
	}
	return fail(Corrupt, where, pos, "%d %s cannot fit in %d bytes (each takes at least %d)", count, name, left, least)
}

func lengthMismatch(where string, start, declared, used int) error {
	return fail(Length, where, start, "declared length %d but the fields take %d bytes", declared, used)
}

func noCase(where string, pos int, on string, value int64) error {
	return fail(Corrupt, where, pos, "no type for %s = %d", on, value)
}

func noProgress(where string, pos int, name string) error {
	return fail(Corrupt, where, pos, "an element of %s took no bytes", name)
}

func badContents(where string, pos int, expected, found []byte) error {
	return fail(Corrupt, where, pos, "expected bytes %x, found %x", expected, found)
}

func corrupt(where string, pos int, err error) error {
	e := fail(Corrupt, where, pos, "%v", err)
	e.Err = err
	return e
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is the checksum of a v2 batch (from its attributes to its end).
func CRC32C(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

func checkCRC(algorithm string, stored uint32, covered []byte, at int, where string) error {
	var computed uint32
	if algorithm == "crc32c" {
		computed = CRC32C(covered)
	} else {
		computed = crc32.ChecksumIEEE(covered)
	}
	if computed != stored {
		return fail(Checksum, where, at, "CRC mismatch: %s stored %#08x, computed %#08x", algorithm, stored, computed)
	}
	return nil
}

// readRaw reads the 7-bit groups at buf[pos] as one unsigned number, bounded by maxLen bytes
// and by what the type holds (32 bits for 5, 64 for 10), as runtime/varint.py does.
func readRaw(buf []byte, pos, end, maxLen int, where string, signed bool) (uint64, int, error) {
	start := pos
	var raw uint64
	var shift uint
	over := false
	limit := min(end, pos+maxLen)
	for pos < limit {
		b := buf[pos]
		pos++
		group := uint64(b & 0x7f)
		if shift == 63 && group > 1 {
			over = true
		}
		raw |= group << shift
		if b < 0x80 {
			if over || maxLen == 5 && raw>>32 != 0 {
				return 0, start, fail(Corrupt, where, start, "%s value out of range", varintKind(maxLen, signed))
			}
			return raw, pos, nil
		}
		shift += 7
	}
	if pos >= end && pos-start < maxLen {
		return 0, start, fail(Truncated, where, start, "varint runs past the end of the data")
	}
	return 0, start, fail(Corrupt, where, start, "%s longer than %d bytes", varintKind(maxLen, signed), maxLen)
}

func varintKind(maxLen int, signed bool) string {
	kind := "varint"
	if maxLen == 10 {
		kind = "varlong"
	}
	if !signed {
		kind = "unsigned " + kind
	}
	return kind
}

func readVarint(buf []byte, pos, end, maxLen int, where string) (int64, int, error) {
	if pos < end && buf[pos] < 0x80 {
		b := int64(buf[pos])
		return (b >> 1) ^ -(b & 1), pos + 1, nil
	}
	raw, next, err := readRaw(buf, pos, end, maxLen, where, true)
	return int64(raw>>1) ^ -int64(raw&1), next, err
}

func readUvarint(buf []byte, pos, end, maxLen int, where string) (int64, int, error) {
	if pos < end && buf[pos] < 0x80 {
		return int64(buf[pos]), pos + 1, nil
	}
	raw, next, err := readRaw(buf, pos, end, maxLen, where, false)
	if maxLen == 10 && raw > 1<<63-1 {
		return 0, pos, fail(Corrupt, where, pos, "unsigned varlong value past 2^63 - 1")
	}
	return int64(raw), next, err
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func ifElse[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// floorDiv and floorMod: Kaitai's (Python's) integer division, rounding down.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
