"""The codecs against the Java libraries Kafka's compression classes call, at every level
Kafka allows: the JDK's GZIPOutputStream (levels 1-9), snappy-java's SnappyOutputStream
(several 32 KiB blocks), and lz4-java's block compressors as Kafka's Lz4BlockOutputStream
picks them (fast at the default level 9, HC at the 16 others). The Kafka-written vectors
prove the default levels only (test_compression.py); this proves the rest, on records
regions Kafka wrote, a producer-sized region of several blocks, and incompressible bytes.

The Java side is tests/runtime/java/KafkaCompressors.java, compiled with javac against
Debian's lz4-java and snappy-java (their JNI libraries call the system's liblz4 and
libsnappy; Kafka's jars bundle the same C libraries). zstd is left out: Debian's zstd-jni
(1.5.2) links another libzstd than the zstandard package bundles, whose blocks may differ
on their own."""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import KAFKA_JAVA

import kafkacodec as kc
from kafkacodec.runtime import compression as C

HERE = Path(__file__).resolve().parent / "java"
JARS = [Path("/usr/share/java/lz4-java.jar"), Path("/usr/share/java/snappy-java.jar")]
JNI = ":".join(map(str, sorted(Path("/usr/lib").glob("*/jni"))))  # Debian's multiarch JNI folder

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                       reason="javac and java (JDK 17) are needed"),  # fmt: skip
]


def payloads() -> dict[str, bytes]:
    """Records regions as a producer hands them to its codec."""
    out = {}
    for path in sorted((KAFKA_JAVA / "v2").glob("*.bin")):
        for b in kc.iter_batches(path.read_bytes()):
            if b.compression != C.NONE:
                out[path.stem] = bytes(C.decompress(b.compression, b.records_region_raw))
    rng = random.Random(24)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(800)]  # fmt: skip
    records = [kc.Record(None, 1_700_000_000_000 + i, b"user-%d" % rng.randrange(5000),
                         b" ".join(rng.choice(words) for _ in range(30)), [("trace", b"%x" % i)])
               for i in range(1200)]  # fmt: skip
    batch = next(kc.iter_batches(kc.build_batch(records)))
    out["producer_200k"] = bytes(batch.records_region_raw)  # several lz4 and snappy blocks
    out["random_100k"] = rng.randbytes(100_000)  # blocks that do not shrink
    out["tiny"] = b"k\x00v"
    assert len(out["producer_200k"]) > 3 * 64 * 1024
    return out


def lz4_blocks(frame: bytes) -> list[tuple[bool, bytes]]:
    """The blocks of a Kafka lz4 frame: (stored raw, bytes)."""
    pos, blocks = 7, []  # magic, FLG, BD, header checksum
    while True:
        (size,) = struct.unpack_from("<I", frame, pos)
        pos += 4
        if size == 0:
            return blocks
        n = size & 0x7FFFFFFF
        blocks.append((bool(size & 0x80000000), frame[pos : pos + n]))
        pos += n


def java_lz4_blocks(out: bytes, data: bytes) -> list[tuple[bool, bytes]]:
    """What Lz4BlockOutputStream writes of each compressed block: the block, or the raw
    input when it does not shrink."""
    pos, blocks, at = 0, [], 0
    while pos < len(out):
        (n,) = struct.unpack_from(">i", out, pos)
        chunk = data[at : at + 64 * 1024]
        block = out[pos + 4 : pos + 4 + n]
        blocks.append((True, chunk) if n >= len(chunk) else (False, block))
        pos += 4 + n
        at += 64 * 1024
    return blocks


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    missing = [str(j) for j in JARS if not j.exists()]
    assert not missing, f"{missing}: make test installs Debian's liblz4-java and libsnappy-java"
    d = tmp_path_factory.mktemp("java-compressors")
    cp = ":".join(map(str, JARS))
    proc = subprocess.run(["javac", "-d", str(d), "-cp", cp, str(HERE / "KafkaCompressors.java")],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr

    def run(jobs: list[tuple[str, int, bytes]]) -> list[bytes]:
        lines = []
        for k, (codec, level, data) in enumerate(jobs):
            (d / f"in-{k}").write_bytes(data)
            lines.append(f"{codec} {level} {d / f'in-{k}'} {d / f'out-{k}'}")
        proc = subprocess.run(["java", f"-Djava.library.path={JNI}", "-cp", f"{d}:{cp}", "KafkaCompressors"],
                              input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-4000:]
        assert "lz4-java: LZ4Factory:JNI" in proc.stdout  # the C library, as Kafka's jar runs it
        return [(d / f"out-{k}").read_bytes() for k in range(len(jobs))]

    return run


def test_every_level_writes_what_the_java_libraries_write(java):
    data = payloads()
    jobs = [("gzip", lv, p) for lv in range(1, 10) for p in data.values()]
    jobs += [("lz4", lv, p) for lv in range(1, 18) for p in data.values()]
    jobs += [("snappy", 0, p) for p in data.values()]
    names = [n for _c, _l, p in jobs for n, q in data.items() if q is p]
    wrong = []
    for (codec, level, payload), name, theirs in zip(jobs, names, java(jobs)):
        if codec == "gzip":
            ours, theirs_ = C.compress(C.GZIP, payload, 2, level), theirs
        elif codec == "snappy":
            ours, theirs_ = C.compress(C.SNAPPY, payload, 2), theirs
        else:
            ours, theirs_ = lz4_blocks(C.compress(C.LZ4, payload, 2, level)), java_lz4_blocks(theirs, payload)
        if ours != theirs_:
            wrong.append(f"{codec} level {level} on {name}")
    assert not wrong, f"{len(wrong)} of {len(jobs)} differ from Java's: {wrong[:20]}"
    assert len(jobs) == 27 * len(data) and len(data) >= 12
