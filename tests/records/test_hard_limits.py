"""Hard limits on hostile input: a length field claiming gigabytes never allocates them,
a decompression bomb stops at the configured bound, and the process's peak memory stays
bounded (measured in a fresh interpreter, as the growth of its peak RSS)."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    r'''
    import json, resource, struct, sys, zlib
    import lz4.frame, zstandard
    import kafkacodec as kc
    from kafkacodec.records import columnar
    from kafkacodec.runtime import crc
    from kafkacodec.runtime.varint import encode_varint

    sys.path.insert(0, ROOT)
    from fuzz.harnesses import V2_HEADER as HEADER, v2_batch as batch

    def record_prefix(value_len):
        body = b"\0" + encode_varint(0) + encode_varint(0) + encode_varint(-1) + encode_varint(value_len, 5)
        return encode_varint(len(body) + value_len + 1, 5) + body  # then value, then 0 headers

    def bomb(codec, size):
        """One record whose value is `size` zero bytes, compressed, built in 1 MB steps."""
        chunk = bytes(1 << 20)
        head, tail = record_prefix(size), encode_varint(0)
        if codec == 4:
            c = zstandard.ZstdCompressor().compressobj()
            out = [c.compress(head)] + [c.compress(chunk) for _ in range(size >> 20)] + [c.compress(tail), c.flush()]
        elif codec == 1:
            c = zlib.compressobj(1, zlib.DEFLATED, 31)
            out = [c.compress(head)] + [c.compress(chunk) for _ in range(size >> 20)] + [c.compress(tail), c.flush()]
        else:  # a frame Kafka reads: independent blocks (Lz4BlockInputStream refuses linked ones)
            c = lz4.frame.LZ4FrameCompressor(block_linked=False)
            out = [c.begin(), c.compress(head)] + [c.compress(chunk) for _ in range(size >> 20)] + [c.compress(tail), c.flush()]
        return batch(b"".join(out), 1, codec)

    def peak_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def attempt(fn):
        before = peak_mb()
        try:
            fn()
            outcome = "ok"
        except kc.KafkacodecError as err:
            outcome = type(err).__name__
        return {"outcome": outcome, "growth_mb": round(peak_mb() - before, 1)}

    GB = 2**31 - 1
    cases = {}
    def partial(data):
        """A batch claiming more than is there is a partial tail (as in a fetch): no batch,
        no error, and its bytes are counted as remaining."""
        it = kc.iter_batches(data)
        assert list(it) == [] and it.remaining == len(data)

    cases["len_batch 2 GB (partial tail)"] = attempt(lambda: partial(HEADER.pack(0, GB, 0, 2, 0, 0, 0, 0, 0, -1, -1, -1, 1)))
    cases["num_records 2^31"] = attempt(lambda: next(kc.iter_batches(batch(b"\0" * 10, GB))).records())
    cases["value length 2 GB"] = attempt(lambda: next(kc.iter_batches(batch(record_prefix(GB - 100) + b"\0" * 20, 1))).records())
    legacy = struct.pack(">qiIbbii", 0, 14, 0, 0, 0, -1, GB)
    legacy = legacy[:12] + struct.pack(">I", crc.crc32(legacy[16:])) + legacy[16:]
    cases["legacy value 2 GB"] = attempt(lambda: [b.records() for b in kc.iter_batches(legacy)])
    cases["legacy message 2 GB (partial tail)"] = attempt(lambda: partial(struct.pack(">qiIbbii", 0, GB, 0, 0, 0, -1, 10)))
    cases["columns, num_records 2^31"] = attempt(lambda: columnar.decode_columns(batch(b"\0" * 10, GB)))
    for codec, name in ((4, "zstd"), (1, "gzip"), (3, "lz4")):
        data = bomb(codec, 512 << 20)
        cases[f"{name} bomb 512 MB, bound 16 MB"] = attempt(lambda: next(kc.iter_batches(data)).records(max_inflated=16 << 20))
        cases[f"{name} bomb 512 MB, columns, bound 16 MB"] = attempt(lambda: columnar.decode_columns(data, max_inflated=16 << 20))
    data = bomb(4, 512 << 20)
    cases["zstd bomb 512 MB, default bound"] = attempt(lambda: next(kc.iter_batches(data)).records())
    print(json.dumps({"cases": cases, "peak_mb": round(peak_mb(), 1)}))
    '''
)


@pytest.mark.slow
def test_hostile_input_is_refused_within_bounded_memory():
    # The script frames regions with the fuzz harnesses' v2_batch (fuzz/ is not installed).
    script = SCRIPT.replace("ROOT", repr(str(Path(__file__).resolve().parents[2])))
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    cases = report["cases"]
    print(f"peak RSS of the whole run: {report['peak_mb']} MB")
    for name, result in cases.items():
        print(f"{name}: {result['outcome']}, peak RSS +{result['growth_mb']} MB")
    for name, result in cases.items():
        assert (result["outcome"] == "ok") == ("partial tail" in name), (name, result)
        if "default bound" in name:
            # The default bound (compression.DEFAULT_MAX_INFLATED, 128 MB) and one copy.
            assert result["outcome"] == "DecompressionLimitError", name
            assert result["growth_mb"] < 300, (name, result)
        elif "bomb" in name:
            assert result["outcome"] == "DecompressionLimitError", name
            assert result["growth_mb"] < 48, (name, result)
        else:
            assert result["growth_mb"] < 16, (name, result)


WRAPPER_SCRIPT = textwrap.dedent(
    r'''
    import json, resource, struct, zlib
    import kafkacodec as kc

    def peak_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # A magic 1 gzip wrapper at offset 5_000_000 whose 64 MB inflate to 2.4 million empty
    # messages (relative offsets 0..n-1): the fuzzer's 1 GB out-of-memory of CI stop 33.
    n = 2_400_000
    body = bytes([1, 0]) + struct.pack(">qii", 7, -1, -1)
    msg = struct.pack(">I", zlib.crc32(body)) + body
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = struct.Struct(">qi")
    step = 100_000  # built and compressed 3.4 MB at a time: the peak before is small
    z = b"".join(c.compress(b"".join(head.pack(i, len(msg)) + msg for i in range(at, at + step)))
                 for at in range(0, n, step)) + c.flush()
    body = bytes([1, 1]) + struct.pack(">qii", 7, -1, len(z)) + z
    wrapper = struct.pack(">I", zlib.crc32(body)) + body
    data = struct.pack(">qi", 5_000_000, len(wrapper)) + wrapper
    del z, body, wrapper
    before = peak_mb()
    base = [b.base_offset for b in kc.iter_batches(data)]
    print(json.dumps({"base": base, "growth_mb": round(peak_mb() - before, 1), "n": n}))
    '''
)


@pytest.mark.slow
def test_a_wrappers_base_offset_costs_its_inflated_bytes_only():
    """A legacy wrapper's base offset walks its inner messages' heads: no Record per inner
    message (2.4 million of them took 1.2 GB under the fuzzer)."""
    proc = subprocess.run(
        [sys.executable, "-c", WRAPPER_SCRIPT], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    print(report)
    assert report["base"] == [5_000_000 - report["n"] + 1]
    inflated_mb = report["n"] * 34 / 2**20  # 12 bytes of head, 22 of message each
    assert report["growth_mb"] < 2.5 * inflated_mb, report
