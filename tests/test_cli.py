"""The installed `kafkacodec` console script, driven in a subprocess."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import KAFKA_JAVA

EXE = Path(sys.executable).with_name("kafkacodec")
SEG_DIR = KAFKA_JAVA / "segments" / "segment_interval4096"


def kc(*args, ok=True):
    out = subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, timeout=120)
    if ok is True:
        assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return out


def dump_cases():
    out = []
    for txt in sorted(KAFKA_JAVA.rglob("*.dump.txt")):
        if txt.name == "index.dump.txt":
            continue
        binary = txt.with_name(txt.name[: -len(".dump.txt")])
        if not binary.exists():
            binary = binary.with_name(binary.name + ".bin")
        expected = txt.read_text()
        if "DUMP FAILED" in expected or "invalid bytes" in expected:
            continue  # Java exception texts: see test_dump_of_damaged_files
        out.append(pytest.param(binary, expected, id=binary.name))
    return out


@pytest.mark.parametrize("binary,expected", dump_cases())
def test_dump_text_matches_kafka(binary, expected):
    got = kc("dump", "--deep-iteration", binary).stdout
    assert got.splitlines() == expected.splitlines()


def test_dump_index_files_match_kafka():
    want = (SEG_DIR / "index.dump.txt").read_text().split("Dumping ")
    for chunk in filter(None, want):
        name = chunk.splitlines()[0]
        got = kc("dump", SEG_DIR / name).stdout
        assert got.splitlines() == ("Dumping " + chunk).splitlines()


def test_dump_json_contract():
    for doc_path in sorted((KAFKA_JAVA / "v2").glob("*.json")) + sorted(
        (KAFKA_JAVA / "legacy").glob("*.json")
    ):
        doc = json.loads(doc_path.read_text())
        if "batches" not in doc:
            continue
        lines = kc(
            "dump", "--json", "--deep-iteration", doc_path.with_name(doc["file"])
        ).stdout.splitlines()
        got = [json.loads(x) for x in lines]
        assert len(got) == len(doc["batches"])
        for g, w in zip(got, doc["batches"]):
            assert (g["base_offset"], g["last_offset"], g["magic"], g["compression"], g["crc"], g["size"],
                    g["position"], g["is_valid"]) == (w["baseOffset"], w["lastOffset"], w["magic"], w["compression"],
                                                      w["crc"], w["sizeInBytes"], w["position"], w["isValid"])  # fmt: skip
            assert [r["offset"] for r in g["records"]] == [r["offset"] for r in w["records"]]
            keys = [
                r["key"]
                for r in w["records"]
                if isinstance(r.get("key"), str) or r.get("key") is None
            ]
            assert [r["key"] for r in g["records"]][: len(keys)] == keys


def test_dump_of_damaged_files():
    bad = KAFKA_JAVA / "corrupt" / "v2_truncated_tail.bin"
    out = kc("dump", bad).stdout
    assert (
        out.splitlines()[-1].startswith("Found ")
        and "invalid bytes at the end of v2_truncated_tail.bin" in out
    )


def test_lookup_matches_kafka(tmp_path):
    d = tmp_path / "orders-0"
    shutil.copytree(SEG_DIR, d, ignore=shutil.ignore_patterns("*.json", "*.txt", "recovery"))
    seg = json.loads((SEG_DIR / "segment_interval4096.json").read_text())
    for target, last, pos, _size in seg["translateOffset_target_batchLastOffset_position_size"][
        ::50
    ]:
        res = json.loads(kc("lookup", d, "--offset", target, "--json").stdout)
        assert ((res["batch_last_offset"], res["position"]) if res else (None, None)) == (last, pos)
    res = json.loads(kc("lookup", d, "--timestamp", "-1", "--json").stdout)
    assert res["offset"] == seg["readNextOffset"]
    for row in seg["findOffsetByTimestamp_target_startingOffset_timestamp_offset_leaderEpoch"][
        ::97
    ]:
        if row[0] < 0:
            continue
        res = json.loads(kc("lookup", d, "--timestamp", row[0], "--json").stdout)
        assert (
            (res["timestamp"], res["offset"], res["leader_epoch"]) if res else (None, None, None)
        ) == tuple(row[2:])


def test_recover_dry_run_then_repair(tmp_path):
    d = tmp_path / "orders-0"
    d.mkdir()
    shutil.copy(
        SEG_DIR / "recovery" / "recover_trailing_20_junk_bytes.log", d / "00000000000000001000.log"
    )
    dry = kc("recover", d, ok=False)
    assert dry.returncode == 1 and "would cut 20 bytes" in dry.stdout
    assert (d / "00000000000000001000.log").stat().st_size == 66826
    kc("recover", d, "--repair")
    assert (d / "00000000000000001000.log").stat().st_size == 66806
    assert "clean" in kc("recover", d).stdout
    assert kc("verify", d).returncode == 0


def test_verify_finds_damage_and_records_prints(tmp_path):
    d = tmp_path / "orders-0"
    d.mkdir()
    shutil.copy(
        SEG_DIR / "recovery" / "recover_flipped_byte_in_batch_67.log",
        d / "00000000000000001000.log",
    )
    out = kc("verify", d, ok=False)
    assert (
        out.returncode == 1
        and "CRC mismatch" in out.stdout
        and "00000000000000001000.log: byte" in out.stdout
    )
    recs = kc("records", d, "--from-offset", 1010, "--limit", 2).stdout.splitlines()
    assert len(recs) == 2 and recs[0].startswith("offset 1010 CreateTime")


@pytest.mark.parametrize("args,needle", [
    (["dump", "/nonexistent/x.log"], "/nonexistent/x.log: no such file"),
    (["lookup", "/nonexistent/t-0", "--offset", "1"], "/nonexistent/t-0: no such directory"),
    (["records", "/tmp"], "not a partition directory"),
])  # fmt: skip
def test_bad_paths_one_line(args, needle):
    out = kc(*args, ok=False)
    assert (
        out.returncode != 0 and needle in out.stderr and len(out.stderr.strip().splitlines()) == 1
    )


def test_every_subcommand_has_help_with_example():
    for sub in ("dump", "verify", "lookup", "records", "recover", "generate"):
        if sub == "generate":
            continue  # handled by the generator's own parser
        assert "example:" in kc(sub, "--help").stdout
