package kafkacodec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/OneOfOne/xxhash"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
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

var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(MaxInflated), zstd.WithDecoderConcurrency(1))

// kafkaCompression is the schemas' `process: kafka_compression(codec, magic)`: the payload
// decompressed as Kafka's CompressionType reads it, with the Go libraries Kafka's Go
// clients use (klauspost/compress for gzip and zstd, pierrec/lz4 for LZ4 blocks in Kafka's
// frame, golang/snappy for snappy blocks in snappy-java's framing or alone).
func kafkaCompression(src []byte, codec, magic int64) ([]byte, error) {
	top := int64(CodecLZ4)
	if magic >= 2 {
		top = CodecZstd
	}
	if codec < 0 || codec > top {
		return nil, fmt.Errorf("unknown compression codec %d for magic %d", codec, magic)
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
		out, err := zstdDecoder.DecodeAll(src, nil)
		if err != nil {
			return nil, fmt.Errorf("zstd data does not decompress: %w", err)
		}
		if len(out) > MaxInflated {
			return nil, tooBig("zstd")
		}
		return out, nil
	}
}

func tooBig(codec string) error {
	return fmt.Errorf("%s data inflates past the limit of %d bytes", codec, MaxInflated)
}

func gunzip(src []byte) ([]byte, error) {
	// RFC 1952: a member is at least as large as its ISIZE, so a stream whose last ISIZE
	// passes the limit is refused before anything is inflated.
	if len(src) >= 18 && binary.LittleEndian.Uint32(src[len(src)-4:]) > MaxInflated {
		return nil, fmt.Errorf("gzip data declares %d bytes in its trailer, past the limit of %d bytes",
			binary.LittleEndian.Uint32(src[len(src)-4:]), MaxInflated)
	}
	r, err := gzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("gzip data does not decompress: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(r, MaxInflated+1))
	if err != nil {
		return nil, fmt.Errorf("gzip data does not decompress: %w", err)
	}
	if len(out) > MaxInflated {
		return nil, tooBig("gzip")
	}
	return out, nil
}

func unsnappy(src []byte) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlock(src, 0)
	}
	if len(src) < 16 {
		return nil, errors.New("snappy-java stream header is truncated")
	}
	var out []byte
	for at := 16; at < len(src); {
		if len(src)-at < 4 {
			return nil, fmt.Errorf("snappy-java block length truncated at byte %d", at)
		}
		n := int64(int32(binary.BigEndian.Uint32(src[at:])))
		at += 4
		if n < 0 || n > int64(len(src)-at) {
			return nil, fmt.Errorf("snappy-java block at byte %d claims %d bytes, %d left", at-4, n, len(src)-at)
		}
		block, err := snappyBlock(src[at:at+int(n)], len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, block...)
		at += int(n)
	}
	if out == nil {
		out = []byte{}
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

// unlz4 reads Kafka's LZ4 frames back to back (KafkaLZ4BlockInputStream): independent
// blocks, optional block and content checksums; magic 0 frames carry the header checksum
// of KAFKA-3160 (computed over the magic number too), which is not checked.
func unlz4(src []byte, magic int64) ([]byte, error) {
	out := []byte{}
	at := 0
	for {
		frameStart := len(out)
		if len(src)-at < 7 || binary.LittleEndian.Uint32(src[at:]) != lz4Magic {
			return nil, errors.New("not an LZ4 frame (bad magic number)")
		}
		flg, bd := src[at+4], src[at+5]
		if flg>>6 != 1 || flg&0x02 != 0 || bd&0x8f != 0 {
			return nil, errors.New("LZ4 frame descriptor not supported")
		}
		descEnd := at + 6
		if flg&0x08 != 0 {
			descEnd += 8
		}
		if flg&0x01 != 0 {
			descEnd += 4
		}
		if len(src) <= descEnd {
			return nil, errors.New("LZ4 frame header is truncated")
		}
		if magic != 0 && byte(xxhash.Checksum32(src[at+4:descEnd])>>8) != src[descEnd] {
			return nil, errors.New("LZ4 frame header checksum does not match")
		}
		maxBlock := 1 << (8 + 2*((bd>>4)&7))
		at = descEnd + 1
		for {
			if len(src)-at < 4 {
				return nil, errors.New("LZ4 frame ends before its end mark")
			}
			size := binary.LittleEndian.Uint32(src[at:])
			at += 4
			if size == 0 {
				break
			}
			raw := size&0x80000000 != 0
			n := int(size & 0x7fffffff)
			if n > len(src)-at || n > maxBlock {
				return nil, errors.New("LZ4 block overruns its frame")
			}
			block := src[at : at+n]
			if flg&0x10 != 0 {
				if len(src)-at-n < 4 || binary.LittleEndian.Uint32(src[at+n:]) != xxhash.Checksum32(block) {
					return nil, errors.New("LZ4 block checksum does not match")
				}
			}
			if raw {
				if len(out)+n > MaxInflated {
					return nil, tooBig("lz4")
				}
				out = append(out, block...)
			} else {
				buf := make([]byte, maxBlock)
				got, err := lz4.UncompressBlock(block, buf)
				if err != nil {
					return nil, fmt.Errorf("LZ4 frame does not decompress: %w", err)
				}
				if len(out)+got > MaxInflated {
					return nil, tooBig("lz4")
				}
				out = append(out, buf[:got]...)
			}
			at += n
			if flg&0x10 != 0 {
				at += 4
			}
		}
		if flg&0x04 != 0 {
			if len(src)-at < 4 {
				return nil, errors.New("LZ4 frame content checksum is truncated")
			}
			if binary.LittleEndian.Uint32(src[at:]) != xxhash.Checksum32(out[frameStart:]) {
				return nil, errors.New("LZ4 frame content checksum does not match")
			}
			at += 4
		}
		if at >= len(src) {
			return out, nil
		}
	}
}
