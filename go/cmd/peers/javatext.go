package main

import "strings"

const replacement = '\uFFFD'

func continuation(b byte) bool { return b&0xC0 == 0x80 }

// javaUTF8 is src as Java's new String(bytes, StandardCharsets.UTF_8) reads it (JDK 17):
// each malformed sequence one U+FFFD where Java draws its bounds. A header key is compared
// as Kafka's consumer hands it to its application (a Java String); a Go client's raw bytes
// are read so, not as encoding/json would replace them (a U+FFFD per byte). A port of
// kafkacodec/records/javatext.py's java_utf8, which tests hold to the JDK.
func javaUTF8(src []byte) string {
	var out strings.Builder
	sp, sl := 0, len(src)
	for sp < sl {
		b1 := src[sp]
		sp++
		switch {
		case b1 < 0x80:
			out.WriteByte(b1)
		case b1>>5 == 0b110 && b1&0x1E != 0: // two bytes (C0 and C1 never start one)
			if sp < sl {
				if b2 := src[sp]; continuation(b2) {
					out.WriteRune(rune(b1&0x1F)<<6 | rune(b2&0x3F))
					sp++
				} else {
					out.WriteRune(replacement)
				}
				continue
			}
			out.WriteRune(replacement)
			return out.String()
		case b1>>4 == 0b1110: // three bytes
			if sp+1 < sl {
				b2, b3 := src[sp], src[sp+1]
				bad2 := (b1 == 0xE0 && b2&0xE0 == 0x80) || !continuation(b2)
				if bad2 || !continuation(b3) {
					out.WriteRune(replacement)
					if !bad2 {
						sp++
					}
				} else {
					c := rune(b1&0x0F)<<12 | rune(b2&0x3F)<<6 | rune(b3&0x3F)
					if c >= 0xD800 && c <= 0xDFFF {
						out.WriteRune(replacement)
					} else {
						out.WriteRune(c)
					}
					sp += 2
				}
				continue
			}
			out.WriteRune(replacement)
			if sp < sl && ((b1 == 0xE0 && src[sp]&0xE0 == 0x80) || !continuation(src[sp])) {
				continue
			}
			return out.String()
		case b1>>3 == 0b11110: // four bytes
			bad2 := b1 > 0xF4
			if sp < sl {
				b2 := src[sp]
				bad2 = bad2 || (b1 == 0xF0 && !(b2 >= 0x90 && b2 <= 0xBF)) || (b1 == 0xF4 && b2&0xF0 != 0x80)
				bad2 = bad2 || !continuation(b2)
			}
			if sp+2 < sl {
				b2, b3, b4 := src[sp], src[sp+1], src[sp+2]
				uc := rune(b1&0x07)<<18 | rune(b2&0x3F)<<12 | rune(b3&0x3F)<<6 | rune(b4&0x3F)
				if continuation(b2) && continuation(b3) && continuation(b4) && uc >= 0x10000 && uc <= 0x10FFFF {
					out.WriteRune(uc)
					sp += 3
				} else {
					out.WriteRune(replacement)
					if !bad2 {
						if !continuation(b3) {
							sp++
						} else {
							sp += 2
						}
					}
				}
				continue
			}
			out.WriteRune(replacement)
			if bad2 {
				continue
			}
			sp++
			if sp < sl && !continuation(src[sp]) {
				continue
			}
			return out.String()
		default:
			out.WriteRune(replacement)
		}
	}
	return out.String()
}
