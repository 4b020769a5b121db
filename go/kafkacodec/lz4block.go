package kafkacodec

import "errors"

// errLZ4Block is what liblz4's LZ4_decompress_safe answers with a negative number.
var errLZ4Block = errors.New("lz4: corrupt block")

// lz4Block decodes one LZ4 block into dst, whose length is the frame's largest block, as
// LZ4_decompress_safe (liblz4 1.9/1.10, lib/lz4.c LZ4_decompress_generic: full block, no
// dictionary) decides it: the decompressor lz4-java calls for Kafka's Lz4BlockInputStream
// (LZ4Factory.fastestInstance().safeDecompressor(), the frame's block size as the output's
// bound), and python-lz4 for kafkacodec's runtime. Block decoders differ at a block's
// edges: liblz4 takes a last sequence's literals whatever its match length nibble says
// (pierrec/lz4 refuses it), refuses literals that end within 8 bytes of the block's end
// without ending it, a match that ends within 5 bytes of the output's bound, and copies a
// match of offset 0 as zeros. Both of liblz4's loops are followed: the fast one while the
// output is 64 bytes or more from its bound, the safe one, with its shortcut, after it hands
// over. The output is the bytes decoded, or errLZ4Block.
func lz4Block(src, dst []byte) (int, error) {
	const (
		minMatch     = 4
		lastLiterals = 5
		mfLimit      = 12
		safeguard    = 12 // MATCH_SAFEGUARD_DISTANCE
		fastSafe     = 64 // FASTLOOP_SAFE_DISTANCE
		runMask      = 15
	)
	iend, oend := len(src), len(dst)
	if oend == 0 {
		if iend == 1 && src[0] == 0 {
			return 0, nil
		}
		return 0, errLZ4Block
	}
	if iend == 0 {
		return 0, errLZ4Block
	}
	ip, op := 0, 0
	// read_variable_length: bytes of 255 and the one that ends them, each read checked
	// against limit (and, first, the position itself when initial)
	varLen := func(limit int, initial bool) (int, bool) {
		if initial && ip >= limit {
			return 0, false
		}
		n := 0
		for {
			if ip >= iend {
				return 0, false
			}
			s := int(src[ip])
			ip++
			n += s
			if ip > limit {
				return 0, false
			}
			if s != 255 {
				return n, true
			}
		}
	}
	copyMatch := func(match, length int) {
		if match == op { // offset 0: liblz4 writes zeros
			clear(dst[op : op+length])
			return
		}
		for i := 0; i < length; i++ { // forward: an overlapping match repeats itself
			dst[op+i] = dst[match+i]
		}
	}
	fast := oend-op >= fastSafe
	var token, length, match int
	for {
		// where a step of liblz4's loops goes next
		const (
			next = iota
			literals
			matchLength
			matchCopy
		)
		step := next
		if fast {
			if ip >= iend {
				return 0, errLZ4Block
			}
			token = int(src[ip])
			ip++
			length = token >> 4
			switch {
			case length == runMask:
				addl, ok := varLen(iend-runMask, true)
				if !ok {
					return 0, errLZ4Block
				}
				length += addl
				if op+length > oend-32 || ip+length > iend-32 {
					step = literals
				}
			case ip > iend-17:
				step = literals
			}
			if step == next {
				copy(dst[op:op+length], src[ip:ip+length])
				ip += length
				op += length
				offset := int(src[ip]) | int(src[ip+1])<<8
				ip += 2
				match = op - offset
				length = token & 15
				if length == 15 {
					addl, ok := varLen(iend-lastLiterals+1, false)
					if !ok {
						return 0, errLZ4Block
					}
					length += addl + minMatch
				} else {
					length += minMatch
				}
				if op+length >= oend-fastSafe {
					step = matchCopy
				} else {
					if match < 0 {
						return 0, errLZ4Block
					}
					copyMatch(match, length)
					op += length
					continue
				}
			}
			fast = false
		}
		if step == next { // the safe loop
			if ip >= iend {
				return 0, errLZ4Block
			}
			token = int(src[ip])
			ip++
			length = token >> 4
			if length != runMask && ip < iend-16 && op <= oend-32 { // the shortcut
				copy(dst[op:op+length], src[ip:ip+length])
				op += length
				ip += length
				length = token & 15
				offset := int(src[ip]) | int(src[ip+1])<<8
				ip += 2
				match = op - offset
				if length != 15 && offset >= 8 && match >= 0 {
					copyMatch(match, length+minMatch)
					op += length + minMatch
					continue
				}
				step = matchLength
			} else {
				if length == runMask {
					addl, ok := varLen(iend-runMask, true)
					if !ok {
						return 0, errLZ4Block
					}
					length += addl
				}
				step = literals
			}
		}
		if step == literals {
			cpy := op + length
			if cpy > oend-mfLimit || ip+length > iend-(2+1+lastLiterals) {
				// the last sequence: its literals end the input, within the output
				if ip+length != iend || cpy > oend {
					return 0, errLZ4Block
				}
				copy(dst[op:cpy], src[ip:iend])
				return cpy, nil
			}
			copy(dst[op:cpy], src[ip:ip+length])
			ip += length
			op = cpy
			offset := int(src[ip]) | int(src[ip+1])<<8
			ip += 2
			match = op - offset
			length = token & 15
			step = matchLength
		}
		if step == matchLength {
			if length == 15 {
				addl, ok := varLen(iend-lastLiterals+1, false)
				if !ok {
					return 0, errLZ4Block
				}
				length += addl
			}
			length += minMatch
		}
		// safe_match_copy
		if match < 0 {
			return 0, errLZ4Block
		}
		cpy := op + length
		if cpy > oend-safeguard && cpy > oend-lastLiterals {
			return 0, errLZ4Block // the last 5 bytes must be literals
		}
		copyMatch(match, length)
		op = cpy
	}
}
