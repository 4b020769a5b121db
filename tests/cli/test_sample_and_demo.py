"""The sample log.dirs (what `make demo` and the Spark jobs start from) and the demo itself."""

import filecmp
import subprocess
import sys

import pytest

from kafkacodec.log import LogDirs, open_log
from kafkacodec.runtime.compression import codec_name
from kafkacodec.sample import write_sample_log_dirs


def test_sample_covers_every_format_and_is_deterministic(tmp_path):
    root = write_sample_log_dirs(tmp_path / "a", batches=120, segment_bytes=16 << 10)
    log = open_log(root)
    assert isinstance(log, LogDirs)
    seen, controls, ts_types = set(), set(), set()
    for part in log.partitions:
        for seg in part.segments:
            for b in seg.batches(verify_crc=True):
                seen.add((b.magic, codec_name(b.compression)))
                ts_types.add(b.timestamp_type)
                for r in b.records():
                    if r.control is not None:
                        controls.add(r.control.type_name)
    codecs = ("none", "gzip", "snappy", "lz4")
    assert seen >= {(m, c) for m in (0, 1) for c in codecs} | {(2, c) for c in (*codecs, "zstd")}
    assert controls == {"COMMIT", "ABORT"}
    assert ts_types >= {"CreateTime", "LogAppendTime", "NoTimestampType"}
    assert len(open_log(root / "orders-0").segments) > 1
    # read_committed drops exactly the aborted transactions' records
    p = open_log(root / "orders-0")
    everything = [r.offset for _, _, r in p.read(0) if r.control is None]
    committed = [r.offset for _, _, r in p.read(0, committed_only=True)]
    aborted = {
        o
        for t in p.aborted_transactions(0, p.log_end_offset)
        for o in range(t.first_offset, t.last_offset + 1)
    }
    assert aborted and committed == [o for o in everything if o not in aborted]
    again = write_sample_log_dirs(tmp_path / "b", batches=120, segment_bytes=16 << 10)
    for part in root.iterdir():
        names = sorted(f.name for f in part.iterdir())
        assert names == sorted(f.name for f in (again / part.name).iterdir())
        assert filecmp.cmpfiles(part, again / part.name, names, shallow=False)[0] == names


@pytest.mark.spark
@pytest.mark.slow
def test_demo_runs_clean(tmp_path):
    out = subprocess.run([sys.executable, "-m", "kafkacodec.demo", str(tmp_path / "logdirs")],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "clean" in out.stdout and "demo finished: every check passed" in out.stdout


def test_sample_command_writes_what_it_says(tmp_path):
    import json

    from conftest import kafkacodec_cli as cli

    out = cli("sample", tmp_path / "big", "--records", 12345, "--partitions", 3,
              "--codecs", "zstd,none", "--batch-records", 40, "--segment-bytes", "64k").stdout  # fmt: skip
    assert out.startswith(
        f"wrote {tmp_path / 'big'}: 12345 records in 309 batches over 3 partitions"
    )
    logs = open_log(tmp_path / "big")
    assert sorted(p.path.name for p in logs.partitions) == ["sample-0", "sample-1", "sample-2"]
    assert sum(len(p.segments) for p in logs.partitions) > 3  # rolled at 64k
    seen = {codec_name(b.compression) for p in logs.partitions for s in p.segments for b in s.batches()}
    assert seen == {"zstd", "none"}
    v = json.loads(cli("verify", "--json", "--quiet", tmp_path / "big").stdout)
    assert v["clean"] and v["records"] == 12345
    sized = cli("sample", tmp_path / "sized", "--size", "300k", "--quiet").stdout
    on_disk = sum(f.stat().st_size for f in (tmp_path / "sized").rglob("*.log"))
    assert 300 << 10 <= on_disk < (300 << 10) + 10_000 and f"{on_disk} bytes" in sized
    again = cli("sample", tmp_path / "big", ok=False)  # never writes over what is there
    assert again.returncode == 2 and "exists and is not empty" in again.stderr  # refused
