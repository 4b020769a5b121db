"""Java's reading of UTF-8 (`new String(bytes, StandardCharsets.UTF_8)`, JDK 17): what Kafka's
classes make of a string's bytes, malformed ones included: a record header's key
(RecordHeader.key), every string field of Kafka's generated messages. kafkacodec's readers
keep the bytes (a decoded str holds what is not UTF-8 as surrogate escapes); where they
give text as Kafka gives it (the columns, the Spark format, dump's JSON), it is read as
here."""

from __future__ import annotations

__all__ = ["java_utf8", "java_text"]

_REPLACEMENT = "\ufffd"


def _continuation(b: int) -> bool:
    return (b & 0xC0) == 0x80


def java_utf8(src: bytes) -> str:
    """src as Java's `new String(bytes, StandardCharsets.UTF_8)` reads it (JDK 17's
    String.decodeUTF8_UTF16, the reader of every string field Kafka's generated classes
    read): each malformed sequence one U+FFFD, where Java draws its bounds (unlike
    Python's decoder: an encoded surrogate, ED A0 80, is one replacement, not three; a
    sequence cut short at the end, one)."""
    out: list[str] = []
    sp, sl = 0, len(src)
    while sp < sl:
        b1 = src[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif b1 >> 5 == 0b110 and b1 & 0x1E:  # two bytes (C0 and C1 never start one)
            if sp < sl:
                b2 = src[sp]
                if _continuation(b2):
                    out.append(chr(((b1 & 0x1F) << 6) | (b2 & 0x3F)))
                    sp += 1
                else:
                    out.append(_REPLACEMENT)
                continue
            out.append(_REPLACEMENT)
            break
        elif b1 >> 4 == 0b1110:  # three bytes
            if sp + 1 < sl:
                b2, b3 = src[sp], src[sp + 1]
                bad2 = (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _continuation(b2)
                if bad2 or not _continuation(b3):  # malformed3: one byte or two
                    out.append(_REPLACEMENT)
                    sp += 0 if bad2 else 1
                else:
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    out.append(_REPLACEMENT if 0xD800 <= c <= 0xDFFF else chr(c))
                    sp += 2
                continue
            out.append(_REPLACEMENT)
            if sp < sl and ((b1 == 0xE0 and (src[sp] & 0xE0) == 0x80) or not _continuation(src[sp])):
                continue
            break
        elif b1 >> 3 == 0b11110:  # four bytes
            bad2 = b1 > 0xF4  # (malformed4's first test, on the byte after b1)
            if sp < sl:
                b2 = src[sp]
                bad2 = bad2 or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF) or (b1 == 0xF4 and (b2 & 0xF0) != 0x80)
                bad2 = bad2 or not _continuation(b2)
            if sp + 2 < sl:
                b2, b3, b4 = src[sp], src[sp + 1], src[sp + 2]
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if _continuation(b2) and _continuation(b3) and _continuation(b4) and 0x10000 <= uc <= 0x10FFFF:
                    out.append(chr(uc))
                    sp += 3
                else:
                    out.append(_REPLACEMENT)
                    sp += 0 if bad2 else (1 if not _continuation(b3) else 2)
                continue
            out.append(_REPLACEMENT)
            if bad2:
                continue
            sp += 1
            if sp < sl and not _continuation(src[sp]):
                continue
            break
        else:
            out.append(_REPLACEMENT)
    return "".join(out)


def java_text(text: str) -> str:
    """A decoded string as Java holds it: the bytes that were not UTF-8 (kept by the
    decoder as surrogate escapes) replaced as java_utf8 replaces them."""
    if text.isascii() or not any("\udc80" <= ch <= "\udcff" for ch in text):
        return text
    return java_utf8(text.encode("utf-8", "surrogateescape"))
