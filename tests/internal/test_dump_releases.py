"""What `dump --kafka-version` takes and what it does where that release's kafka-dump-log
stops: the releases it knows (every one the tests run beside it), Java's reading of
invalid UTF-8, and the line a dump ends on. The texts themselves are judged by every
release's own tool in tests/kafka/test_kafka_dump_releases.py."""

from __future__ import annotations

import random
import re
import shutil
import subprocess

import pytest
from conftest import ROOT, kafkacodec_cli

import kafkacodec as kc
from kafkacodec.internal.dump_format import RELEASES, release
from kafkacodec.internal.kafka_json import java_utf8


def test_a_minor_release_is_its_newest_patch_release():
    assert (
        release("4.2") == (4, 2, 2) and release("4.1") == (4, 1, 2) and release("3.9") == (3, 9, 2)
    )
    assert release("4.1.1") == (4, 1, 1) and release(" 4.0.0 ") == (4, 0, 0)


@pytest.mark.parametrize(
    "text", ["9.9", "4.5", "4.4.1", "3.8", "3.8.1", "4", "4.x", "", "4.1.1.1", "v4.1"]
)
def test_a_release_no_test_has_run_is_refused(text):
    with pytest.raises(ValueError, match="no Kafka release|is not a Kafka release"):
        release(text)


def test_the_command_line_refuses_it_before_reading(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(kc.build_batch([kc.Record(None, 0, b"k", b"v")]))
    out = kafkacodec_cli("dump", "--kafka-version", "9.9", log, ok=None)
    assert out.returncode == 2 and not out.stdout
    assert "no Kafka release 9.9" in out.stderr and "4.4" in out.stderr


def test_the_makefile_resolves_the_tool_of_every_release_it_takes():
    text = (ROOT / "Makefile").read_text()
    versions = re.search(r"^TOOL_VERSIONS := (.*)$", text, re.M).group(1).split()
    assert versions == [p for patches in RELEASES.values() for p in patches]


#: Bytes and the UTF-16 code units JDK 17's `new String(bytes, UTF_8)` made of them (what
#: Kafka's readString and Jackson print): one U+FFFD per malformed subsequence as Java's
#: decoder delimits it, which is not how Python's "replace" does (a surrogate's encoding
#: ED A0 80 is one U+FFFD to Java where Python makes three, E0 ED A0 is two).
JAVA_UTF8 = [
    ("e0eda0", "fffdfffd"),
    ("eda0", "fffd"),
    ("80eda0", "fffdfffd"),
    ("26f49feda9", "0026fffdfffdfffd"),
    ("a0f490eda0", "fffdfffdfffdfffd"),
    ("90f9eda0", "fffdfffdfffd"),
    ("e1ed8feda0", "fffdfffdfffd"),
    ("c1eda0f1", "fffdfffdfffd"),
    ("f5edbf9f", "fffdfffd"),
    ("edbf6bc2", "fffd006bfffd"),
    ("dfeda000", "fffdfffd0000"),
    ("f09f9880", "d83dde00"),
]


def _units(text: str) -> str:
    return text.encode("utf-16-be").hex()


@pytest.mark.parametrize(("data", "units"), JAVA_UTF8)
def test_invalid_utf8_reads_as_java_reads_it(data, units):
    assert _units(java_utf8(bytes.fromhex(data))) == units


def _cases(seed: int, n: int) -> list[bytes]:
    """UTF-8 with its edges: lead bytes, continuations, overlongs, surrogates, cut sequences."""
    rng = random.Random(seed)
    pieces = [b"\x00", b"a", b"\x7f", b"\x80", b"\xbf", b"\xc0", b"\xc1", b"\xc2", b"\xdf", b"\xe0", b"\xe1",
              b"\xed", b"\xef", b"\xf0", b"\xf4", b"\xf5", b"\xff", b"\xa0", b"\x9f", b"\x8f", b"\x90",
              "é".encode(), "中".encode(), "😀".encode(), "\uffff".encode()]  # fmt: skip
    return [b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(n)]


@pytest.mark.crosslang
@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")
def test_java_utf8_is_the_jdks_own_decoding(tmp_path):
    """java_utf8 against the JDK's own decoder on 20,000 seeded byte strings."""
    src = tmp_path / "Utf8Units.java"
    src.write_text(
        "import java.io.*; import java.nio.charset.StandardCharsets;\n"
        "public class Utf8Units { public static void main(String[] a) throws IOException {\n"
        "  BufferedReader r = new BufferedReader(new InputStreamReader(System.in)); StringBuilder o = new StringBuilder();\n"
        "  for (String l; (l = r.readLine()) != null; ) { byte[] b = new byte[l.length() / 2];\n"
        "    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(l.substring(2 * i, 2 * i + 2), 16);\n"
        "    String s = new String(b, StandardCharsets.UTF_8);\n"
        '    for (int i = 0; i < s.length(); i++) o.append(String.format("%04x", (int) s.charAt(i)));\n'
        "    o.append('\\n'); }\n"
        "  System.out.print(o); } }\n"
    )
    subprocess.run(["javac", "-d", str(tmp_path), str(src)], check=True, timeout=120)
    cases = _cases(54, 20_000)
    java = subprocess.run(["java", "-cp", str(tmp_path), "Utf8Units"], input="".join(c.hex() + "\n" for c in cases),
                          capture_output=True, text=True, check=True, timeout=300).stdout.splitlines()  # fmt: skip
    wrong = [
        (c.hex(), j, _units(java_utf8(c)))
        for c, j in zip(cases, java, strict=True)
        if _units(java_utf8(c)) != j
    ]
    assert not wrong, wrong[:5]
    assert any(_units(c.decode("utf-8", "replace")) != j for c, j in zip(cases, java)), (
        "cases Python reads alike"
    )


def test_a_dump_ends_where_kafka_dump_log_dies(tmp_path):
    """A __consumer_offsets record with no key: OffsetsMessageParser throws, nothing catches
    it, kafka-dump-log ends after the record's line so far (no newline) and the JVM prints
    the exception; kafkacodec prints the same line, then says on stderr where and why."""
    d = tmp_path / "__consumer_offsets-0"
    d.mkdir()
    log = d / "00000000000000000000.log"
    log.write_bytes(kc.build_batch([kc.Record(None, 5, None, b"\x00\x03")], base_offset=7)
                    + kc.build_batch([kc.Record(None, 6, b"\x00\x01", None)], base_offset=8))  # fmt: skip
    for version, words in (
        ("4.4", "using the specified decoder"),
        ("4.0", "using offset topic decoder"),
    ):
        out = kafkacodec_cli("dump", "--offsets-decoder", "--kafka-version", version, log, ok=None)
        assert out.returncode == 1, out.stderr
        last = out.stdout.split("\n")[-1]
        assert last.startswith("| offset: 7 ") and last.endswith("headerKeys: []"), out.stdout
        assert "offset: 8" not in out.stdout
        assert f"record at offset 7: kafka-dump-log {version}." in out.stderr
        assert (
            f"Failed to decode message at offset 7 {words} (message had a missing key)"
            in out.stderr
        )


@pytest.mark.parametrize(("version", "words"), [
    ("4.0", "org.apache.kafka.common.InvalidRecordException: Invalid version found for control record: -256."),
    ("4.4", "org.apache.kafka.common.InvalidRecordException: Invalid version found for control record: -256."),
])  # fmt: skip
def test_a_control_record_kafka_cannot_read_ends_the_dump(tmp_path, version, words):
    """ControlRecordType.parseTypeId throws for a key of a negative version; kafka-dump-log
    dies after the record's line so far, whichever formatter prints the batch."""
    log = tmp_path / "orders-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(kc.build_batch([kc.Record(None, 5, b"\xff\x00\x00\x01", b"\x00\x00\x00\x00\x00\x05")],
                                   base_offset=3, is_control=True)
                    + kc.build_batch([kc.Record(None, 6, b"k", b"v")], base_offset=4))  # fmt: skip
    out = kafkacodec_cli("dump", "--deep-iteration", "--kafka-version", version, log, ok=None)
    assert out.returncode == 1, out.stdout
    assert out.stdout.split("\n")[-1].startswith("| offset: 3 ") and "offset: 4" not in out.stdout
    assert words in out.stderr
