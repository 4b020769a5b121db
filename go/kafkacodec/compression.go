package kafkacodec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/OneOfOne/xxhash"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"
)

// MaxInflated is what one compressed payload may inflate to (runtime/compression.py's
// DEFAULT_MAX_INFLATED): a larger output is an error, never an allocation.
const MaxInflated = 128 << 20

// The codecs of a batch's or a legacy message's attributes.
const (
	CodecNone   = 0
	CodecGzip   = 1
	CodecSnappy = 2
	CodecLZ4    = 3
	CodecZstd   = 4
)

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// kafkaCompression is the schemas' `process: kafka_compression(codec, magic)`: the payload
// decompressed as Kafka's CompressionType reads it, with the Go libraries Kafka's Go
// clients use (klauspost/compress for gzip and zstd, LZ4 blocks as liblz4 decodes them in Kafka's
// frame, golang/snappy for snappy blocks in snappy-java's framing or alone).
// kafkaCompression is the schemas' `process: kafka_compression(codec, magic)`: the payload
// decompressed as Kafka's Java streams read it (through Kafka's ChunkedBytesStream:
// GZIPInputStream, SnappyInputStream, Lz4BlockInputStream, zstd-jni), to where they end,
// with the Go libraries Kafka's Go clients use for the codecs themselves (klauspost/compress
// for deflate and zstd, golang/snappy for snappy blocks; LZ4 blocks by lz4Block, liblz4's rules).
// kafkacodec.runtime.compression states the same rules; Kafka's own classes judge them
// (tests/kafka/test_kafka_stream_ends.py), and tests/crosslang holds this to them.
//
// records, when given, is how many records a v2 batch says its region holds: of a region
// said to hold none Kafka reads the codec's head alone (checkHead), whatever follows it.
func kafkaCompression(src []byte, codec, magic int64, records ...int64) ([]byte, error) {
	top := int64(CodecLZ4)
	if magic >= 2 {
		top = CodecZstd
	}
	if codec < 0 || codec > top {
		return nil, fmt.Errorf("unknown compression codec %d for magic %d", codec, magic)
	}
	if len(records) > 0 && records[0] == 0 {
		return []byte{}, checkHead(src, codec, magic)
	}
	switch codec {
	case CodecNone:
		return src, nil
	case CodecGzip:
		return gunzip(src)
	case CodecSnappy:
		return unsnappy(src)
	case CodecLZ4:
		return unlz4(src, magic)
	default:
		return unzstd(src)
	}
}

// Decompress reads a compressed payload (a v2 batch's records region, a legacy wrapper's
// value) of this codec and message format as Kafka reads it: the bytes, or an error where
// Kafka refuses them or they inflate past MaxInflated.
func Decompress(codec, magic int64, src []byte) ([]byte, error) {
	return kafkaCompression(src, codec, magic)
}

// checkHead is what Kafka reads of a compressed records region that holds no record
// (runtime/compression.py's check_head): DefaultRecordBatch's streaming iterator opens the
// codec's stream, whose constructor reads the gzip member header, the LZ4 frame header,
// snappy-java's header or, when the bytes do not start with it, the one raw block it
// decompresses whole; zstd-jni's reads nothing. Then no record is read.
func checkHead(src []byte, codec, magic int64) error {
	var err error
	switch codec {
	case CodecGzip:
		_, err = gzipHeader(src, 0)
	case CodecLZ4:
		_, _, _, err = lz4Head(src, magic)
	case CodecSnappy:
		if len(src) < 16 || !bytes.HasPrefix(src, xerialMagic) {
			_, err = unsnappy(src)
		}
	}
	return err
}

func tooBig(codec string) error {
	return fmt.Errorf("%s data inflates past the limit of %d bytes", codec, MaxInflated)
}

// gzipJDKBuffer is GZIPInputStream's input buffer as Kafka's GzipCompression sizes it:
// where the JDK looks for a next member after one ends depends on what it has read ahead.
const gzipJDKBuffer = 8 * 1024

// gzipHeader is the length of the gzip member header at src[pos:], as the JDK's
// GZIPInputStream.readHeader reads it (reserved flag bits not looked at; a header CRC
// checked).
func gzipHeader(src []byte, pos int) (int, error) {
	n := len(src)
	cut := fmt.Errorf("gzip header cut short at byte %d", pos)
	if n-pos < 10 {
		return 0, cut
	}
	if src[pos] != 0x1f || src[pos+1] != 0x8b {
		return 0, fmt.Errorf("not in gzip format at byte %d", pos)
	}
	if src[pos+2] != 8 {
		return 0, fmt.Errorf("gzip compression method %d at byte %d is not deflate", src[pos+2], pos)
	}
	flg, at := src[pos+3], pos+10
	if flg&4 != 0 { // FEXTRA
		if n-at < 2 {
			return 0, cut
		}
		at += 2 + int(binary.LittleEndian.Uint16(src[at:]))
		if at > n {
			return 0, cut
		}
	}
	for _, bit := range []byte{8, 16} { // FNAME, FCOMMENT: zero-terminated
		if flg&bit != 0 {
			z := bytes.IndexByte(src[at:], 0)
			if z < 0 {
				return 0, cut
			}
			at += z + 1
		}
	}
	if flg&2 != 0 { // FHCRC
		if n-at < 2 {
			return 0, cut
		}
		if binary.LittleEndian.Uint16(src[at:]) != uint16(crc32.ChecksumIEEE(src[pos:at])) {
			return 0, fmt.Errorf("corrupt gzip header at byte %d (its CRC does not match)", pos)
		}
		at += 2
	}
	return at - pos, nil
}

// gunzip is java.util.zip.GZIPInputStream over the bytes (runtime/compression.py's
// _gunzip): a member's header, raw deflate, trailer (CRC-32, length); then, only when the
// JDK looks at what follows (input it has not read yet, or more than 26 bytes of its 8 KiB
// buffer left after the deflate data), a next member if a header it takes starts there,
// else the end: anything else after a member is never read.
func gunzip(src []byte) ([]byte, error) {
	size := len(src)
	pos, err := gzipHeader(src, 0)
	if err != nil {
		return nil, err
	}
	inPos := pos // how far the JDK has pulled bytes into its buffer
	out := []byte{}
	for {
		r := bytes.NewReader(src[pos:]) // an io.ByteReader: flate reads no byte past the stream
		f := flate.NewReader(r)
		member, err := io.ReadAll(io.LimitReader(f, int64(MaxInflated-len(out)+1)))
		if err != nil {
			return nil, fmt.Errorf("gzip data does not decompress: %w", err)
		}
		if len(out)+len(member) > MaxInflated {
			return nil, tooBig("gzip")
		}
		deflateEnd := size - r.Len()
		if deflateEnd > inPos { // the 8 KiB fills that reached the deflate data's end
			inPos = min(size, inPos+(deflateEnd-inPos+gzipJDKBuffer-1)/gzipJDKBuffer*gzipJDKBuffer)
		}
		buffered := inPos - deflateEnd // read ahead past the deflate data (the trailer too)
		if size-deflateEnd < 8 {
			return nil, errors.New("gzip member ends inside its trailer")
		}
		if binary.LittleEndian.Uint32(src[deflateEnd:]) != crc32.ChecksumIEEE(member) ||
			binary.LittleEndian.Uint32(src[deflateEnd+4:]) != uint32(len(member)) {
			return nil, errors.New("corrupt gzip trailer (its CRC or length does not match)")
		}
		out = append(out, member...)
		inPos = max(inPos, deflateEnd+8)
		if !(size-inPos > 0 || buffered > 26) {
			return out, nil
		}
		header, err := gzipHeader(src, deflateEnd+8)
		if err != nil {
			return out, nil // "ignore any malformed": the stream ends here
		}
		pos = deflateEnd + 8 + header
		inPos = max(inPos, pos)
	}
}

// What Kafka asks of SnappyInputStream at a time (SnappyCompression.decompressionOutputSize),
// and the largest chunk SnappyInputStream takes.
const (
	snappyKafkaRead = 2 * 1024
	snappyMaxChunk  = 512 << 20
)

// unsnappy is snappy-java's SnappyInputStream as Kafka reads it (runtime/compression.py's
// _unsnappy): fewer than 16 bytes, or no magic, is one raw block; else chunks (an int32
// length, a raw block) until fewer than 4 bytes are left; a length that is the magic's
// first 4 bytes starts a concatenated stream's header (version at least 1), or, when the
// rest of the magic does not follow, is 16 bytes skipped: the end when the read Kafka made
// (2 KiB of output at a time) had given nothing yet, else the stream goes on.
func unsnappy(src []byte) ([]byte, error) {
	if len(src) == 0 {
		return nil, errors.New("snappy data is empty")
	}
	if len(src) < 16 || !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlock(src, 0)
	}
	out := []byte{}
	at, readStart := 16, 0
	head := int32(binary.BigEndian.Uint32(xerialMagic))
	for len(src)-at >= 4 {
		n := int32(binary.BigEndian.Uint32(src[at:]))
		at += 4
		if n == head { // a concatenated stream's header
			if len(src)-at < 12 {
				return nil, fmt.Errorf("snappy-java header cut short at byte %d", at-4)
			}
			magic := bytes.Equal(src[at:at+4], xerialMagic[4:])
			version := int32(binary.BigEndian.Uint32(src[at+4:]))
			at += 12
			if !magic {
				if (len(out)-readStart)%snappyKafkaRead == 0 {
					break // -1: the end
				}
				readStart = len(out)
				continue
			}
			if version < 1 {
				return nil, fmt.Errorf("snappy-java stream of version %d at byte %d", version, at-16)
			}
			continue
		}
		if n < 0 || n > snappyMaxChunk || int(n) > len(src)-at {
			return nil, fmt.Errorf("snappy-java chunk at byte %d claims %d bytes, %d left", at-4, n, len(src)-at)
		}
		block, err := snappyBlock(src[at:at+int(n)], len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, block...)
		at += int(n)
	}
	return out, nil
}

func snappyBlock(block []byte, before int) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return nil, errors.New("snappy block has no valid length preamble")
	}
	if before+n > MaxInflated {
		return nil, tooBig("snappy")
	}
	out, err := snappy.Decode(make([]byte, n), block)
	if err != nil {
		return nil, fmt.Errorf("snappy block does not decompress: %w", err)
	}
	return out, nil
}

const lz4Magic = 0x184D2204

// lz4Head is Kafka's Lz4BlockInputStream.readHeader over an LZ4 frame (runtime/compression.py's
// _lz4_head): where the blocks start, the FLG byte and the largest block.
func lz4Head(src []byte, magic int64) (int, byte, int, error) {
	n := len(src)
	if n < 6 {
		return 0, 0, 0, errors.New("LZ4 frame header cut short")
	}
	if binary.LittleEndian.Uint32(src) != lz4Magic {
		return 0, 0, 0, errors.New("not an LZ4 frame (bad magic number)")
	}
	flg, bd := src[4], src[5]
	switch {
	case flg&3 != 0:
		return 0, 0, 0, errors.New("LZ4 frame descriptor: reserved bits must be 0")
	case flg&0x20 == 0:
		return 0, 0, 0, errors.New("LZ4 frame descriptor: dependent blocks are not supported")
	case flg>>6 != 1:
		return 0, 0, 0, fmt.Errorf("LZ4 frame version %d is not supported", flg>>6)
	case bd&0x8f != 0:
		return 0, 0, 0, errors.New("LZ4 frame descriptor: reserved block descriptor bits must be 0")
	case (bd>>4)&7 < 4:
		return 0, 0, 0, errors.New("LZ4 frame descriptor: the block size must be 4 to 7")
	}
	at := 6
	if flg&0x08 != 0 { // a content size, skipped
		if n-at < 8 {
			return 0, 0, 0, errors.New("LZ4 frame header cut short")
		}
		at += 8
	}
	if n-at < 1 {
		return 0, 0, 0, errors.New("LZ4 frame header cut short")
	}
	if magic != 0 && src[at] != byte(xxhash.Checksum32(src[4:at])>>8) {
		return 0, 0, 0, errors.New("LZ4 frame descriptor corrupted (its checksum does not match)")
	}
	return at + 1, flg, 1 << (8 + 2*int((bd>>4)&7)), nil
}

// unlz4 is Kafka's Lz4BlockInputStream over one LZ4 frame (runtime/compression.py's
// _unlz4): FLG with no reserved bit, independent blocks, version 1; BD with no reserved bit
// and a block size of 64 KiB to 4 MiB; the descriptor's checksum but for magic 0
// (KAFKA-3160); blocks to the end mark (a size of 0 whatever its top bit), a block checksum
// checked, the content checksum not; a block of no bytes ends the stream (Kafka's
// ChunkedBytesStream), and nothing after the end mark is read.
func unlz4(src []byte, magic int64) ([]byte, error) {
	n := len(src)
	at, flg, maxBlock, err := lz4Head(src, magic)
	if err != nil {
		return nil, err
	}
	out := []byte{}
	buf := make([]byte, maxBlock)
	for {
		if n-at < 4 {
			return nil, errors.New("LZ4 frame ends before its end mark")
		}
		word := binary.LittleEndian.Uint32(src[at:])
		at += 4
		size := int(word & 0x7fffffff)
		if size == 0 { // the end mark
			if flg&0x04 != 0 && n-at < 4 {
				return nil, errors.New("LZ4 frame ends inside its content checksum")
			}
			return out, nil
		}
		if size > maxBlock {
			return nil, fmt.Errorf("LZ4 block of %d bytes, past the frame's %d", size, maxBlock)
		}
		if n-at < size {
			return nil, errors.New("LZ4 frame ends inside a block")
		}
		block := src[at : at+size]
		var got []byte
		if word&0x80000000 != 0 {
			got = block
		} else {
			k, err := lz4Block(block, buf)
			if err != nil {
				return nil, fmt.Errorf("LZ4 block at byte %d does not decompress: %w", at, err)
			}
			got = buf[:k]
		}
		at += size
		if flg&0x10 != 0 { // a block checksum
			if n-at < 4 {
				return nil, errors.New("LZ4 frame ends inside a block checksum")
			}
			if binary.LittleEndian.Uint32(src[at:]) != xxhash.Checksum32(block) {
				return nil, fmt.Errorf("LZ4 block checksum mismatch at byte %d", at-size)
			}
			at += 4
		}
		if len(got) == 0 {
			return out, nil // a block of no bytes ends the stream
		}
		if len(out)+len(got) > MaxInflated {
			return nil, tooBig("lz4")
		}
		out = append(out, got...)
	}
}

const (
	zstdMagic     = 0xFD2FB528
	zstdSkippable = 0x184D2A50 // to 0x184D2A5F
	// zstdJNIRead is how much input zstd-jni's ZstdInputStreamNoFinalizer reads at a time.
	zstdJNIRead = 128<<10 + 3
)

// zstdFrameBlocks is where the frame (or skippable frame) at src[pos:] ends, from its
// headers and its blocks' headers (RFC 8878); -1 when the data ends inside a magic number
// (zstd waits for more); an error for bytes that start no frame or a reserved block. The
// end may lie past the data (the frame is cut short). runtime/compression.py's
// _zstd_frame_end. Second: where the frame's last block ends (its content checksum, if it
// has one, follows), 0 when the data ends before that (or for a skippable frame).
func zstdFrameBlocks(src []byte, pos int) (int, int, error) {
	n := len(src)
	head := src[pos:min(n, pos+4)]
	var magic, skip [4]byte
	binary.LittleEndian.PutUint32(magic[:], zstdMagic)
	binary.LittleEndian.PutUint32(skip[:], zstdSkippable)
	if len(head) < 4 || (n-pos < 5 && bytes.Equal(head, magic[:])) {
		skippable := len(head) > 0 && head[0] >= 0x50 && head[0] <= 0x5f && bytes.Equal(head[1:], skip[1:len(head)])
		if bytes.HasPrefix(magic[:], head) || skippable {
			return -1, 0, nil
		}
		return 0, 0, fmt.Errorf("zstd data holds no frame at byte %d", pos)
	}
	m := binary.LittleEndian.Uint32(head)
	if m&0xFFFFFFF0 == zstdSkippable {
		if n-pos < 8 {
			return pos + 8, 0, nil
		}
		return pos + 8 + int(binary.LittleEndian.Uint32(src[pos+4:])), 0, nil
	}
	if m != zstdMagic {
		return 0, 0, fmt.Errorf("zstd data holds no frame at byte %d", pos)
	}
	fhd := int(src[pos+4])
	single := (fhd >> 5) & 1
	at := pos + 4 + 1 + (1 - single) + []int{0, 1, 2, 4}[fhd&3] + []int{single, 2, 4, 8}[fhd>>6]
	for {
		if n-at < 3 {
			return at + 3, 0, nil
		}
		bh := int(src[at]) | int(src[at+1])<<8 | int(src[at+2])<<16
		kind := (bh >> 1) & 3
		if kind == 3 {
			return 0, 0, fmt.Errorf("zstd block of the reserved type at byte %d", at)
		}
		if kind == 1 {
			at += 3 + 1 // an RLE block holds one byte
		} else {
			at += 3 + bh>>3
		}
		if bh&1 != 0 {
			blocks := 0
			if at <= n {
				blocks = at
			}
			return at + 4*((fhd>>2)&1), blocks, nil // and its content checksum
		}
	}
}

// zstdCutRaw is what a frame at src[pos:] cut short inside a raw block holds of that block:
// libzstd's stream (zstd-jni's, python-zstandard's) hands a raw block's bytes over as they
// come, where klauspost's waits for the whole block; nil when the cut is elsewhere.
func zstdCutRaw(src []byte, pos int) []byte {
	n := len(src)
	fhd := int(src[pos+4])
	single := (fhd >> 5) & 1
	at := pos + 4 + 1 + (1 - single) + []int{0, 1, 2, 4}[fhd&3] + []int{single, 2, 4, 8}[fhd>>6]
	for n-at >= 3 {
		bh := int(src[at]) | int(src[at+1])<<8 | int(src[at+2])<<16
		kind, size := (bh>>1)&3, bh>>3
		if kind == 0 && at+3+size > n {
			return src[at+3 : n]
		}
		if kind == 1 {
			size = 1
		}
		if bh&1 != 0 || at+3+size > n {
			return nil
		}
		at += 3 + size
	}
	return nil
}

var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(MaxInflated), zstd.WithDecoderConcurrency(1))

// zstdFrame decodes one frame (whole: its content, or an error; cut short: what it gives
// before its end), within MaxInflated bytes of output in all.
func zstdFrame(frame []byte, whole bool, before int) ([]byte, error) {
	var got []byte
	var err error
	if whole {
		got, err = zstdDecoder.DecodeAll(frame, nil)
	} else {
		// a frame cut short has no whole checksum to check: what its whole blocks give is
		// what zstd-jni's stream hands over before the data ends
		d, derr := zstd.NewReader(bytes.NewReader(frame), zstd.WithDecoderMaxMemory(MaxInflated),
			zstd.WithDecoderConcurrency(1), zstd.IgnoreChecksum(true))
		if derr != nil {
			return nil, derr
		}
		defer d.Close()
		got, _ = io.ReadAll(io.LimitReader(d, int64(MaxInflated-before+1))) // what it gives
	}
	if err != nil {
		return nil, fmt.Errorf("zstd data does not decompress: %w", err)
	}
	if before+len(got) > MaxInflated {
		return nil, tooBig("zstd")
	}
	return got, nil
}

// unzstd is zstd-jni's ZstdInputStreamNoFinalizer as Kafka reads it (runtime/compression.py's
// _unzstd): frames one after the other, empty and skippable ones giving nothing; at the end
// of the data after a frame cut short (what it gave is kept) or inside a magic number: the
// end if a frame ended since zstd-jni last read input (131075 bytes at a time), else
// "Truncated source".
func unzstd(src []byte) ([]byte, error) {
	n := len(src)
	out := []byte{}
	done, pos := -1, 0
	for pos < n {
		end, blocksEnd, err := zstdFrameBlocks(src, pos)
		if err != nil {
			return nil, err
		}
		if end < 0 {
			break
		}
		skippable := binary.LittleEndian.Uint32(src[pos:])&0xFFFFFFF0 == zstdSkippable
		if end > n {
			if !skippable {
				frame, whole := src[pos:], false
				if blocksEnd > 0 && src[pos+4]&4 != 0 {
					// cut inside its content checksum: every block is whole, and libzstd
					// (zstd-jni) hands their content over before it looks for the checksum;
					// klauspost's stream holds the last block back until then, so the frame
					// is read whole without the checksum flag (a bit of its header)
					frame = append([]byte{}, src[pos:end-4]...)
					frame[4] &^= 4
					whole = true
				}
				got, err := zstdFrame(frame, whole, len(out))
				if err != nil {
					return nil, err
				}
				out = append(out, got...)
				if !whole { // a raw block cut short: libzstd streams the bytes it has
					out = append(out, zstdCutRaw(src, pos)...)
					if len(out) > MaxInflated {
						return nil, tooBig("zstd")
					}
				}
			}
			break
		}
		if !skippable {
			got, err := zstdFrame(src[pos:end], true, len(out))
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		done, pos = end, end
	}
	if pos >= n {
		return out, nil
	}
	if lastRead := (n - 1) / zstdJNIRead * zstdJNIRead; done > lastRead {
		return out, nil
	}
	return nil, fmt.Errorf("zstd frame at byte %d is cut short (truncated source)", pos)
}
