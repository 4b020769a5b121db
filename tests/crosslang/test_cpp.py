"""The official Kaitai compiler's C++ output (cpp_stl) of every schema, compiled with g++
against a test-support runtime (tests/crosslang/cpp/runtime: the subset of the official
C++/STL runtime the generated code calls) and run: on every shared log and index vector,
every Kafka-written internal payload and the width-stress logs it reads the same values as
kafkacodec's Python codecs, field by field, and refuses what they refuse. The dump program
is written from the schemas' IR (C++ has no reflection: tests/crosslang/cpp_dump.py) and
checks CRCs over the range each schema exposes (crc_from, crc_to). Compression comes from
the test's kafka_compression.h (zlib, its own snappy and lz4 readers, libzstd)."""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from codec_edges import check_codec_edges, codec_edges, codec_input
from cpp_dump import source
from crosslang import (
    check,
    check_case,
    check_mutations,
    check_refused,
    corpus_fixture,
    corpus_jobs,
    disagreeing_lengths,
    greedy_jobs,
    internal_jobs,
    jobs_file,
    log_jobs,
    mutated_jobs,
    wide_batches,
)

from kafkacodec.export import export

_ = corpus_fixture  # the `corpus` fixture, session-wide

HERE = Path(__file__).resolve().parent / "cpp"
ZSTD = next((p for p in ("/usr/lib/x86_64-linux-gnu/libzstd.so.1", "/usr/lib/aarch64-linux-gnu/libzstd.so.1",
                         "/usr/lib64/libzstd.so.1") if Path(p).exists()), None)  # fmt: skip

#: How many seeded mutations a run reads (peers/bytewise.py).
MUTATIONS = 600

pytestmark = [
    pytest.mark.crosslang,
    pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is needed"),
    pytest.mark.skipif(ZSTD is None, reason="libzstd.so.1 is needed"),
]


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    """The generated C++, the test runtime and the dump program, compiled once."""
    out = tmp_path_factory.mktemp("cpp")
    results = export(out, ["cpp_stl"])
    assert all(r["ok"] for r in results), [r for r in results if not r["ok"]]
    src = out / "cpp_stl"
    (src / "kafkacodec_dump.cpp").write_text(source())
    units = [*sorted(src.glob("*.cpp")), HERE / "runtime" / "kaitai" / "kaitaistream.cpp"]
    flags = ["-std=c++11", "-O0", "-w", f"-I{HERE / 'runtime'}", f"-I{HERE}", f"-I{src}"]

    def build(unit: Path) -> Path:
        obj = out / "obj" / (unit.stem + ".o")
        obj.parent.mkdir(exist_ok=True)
        proc = subprocess.run(
            ["g++", *flags, "-c", str(unit), "-o", str(obj)], capture_output=True, text=True
        )
        assert proc.returncode == 0, f"{unit.name}: {proc.stderr[-3000:]}"
        return obj

    with ThreadPoolExecutor(max_workers=2) as pool:
        objs = list(pool.map(build, units))
    exe = out / "kafkacodec-dump"
    proc = subprocess.run(
        ["g++", "-o", str(exe), *map(str, objs), "-lz", ZSTD], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return exe


def run(exe: Path, jobs, name: str) -> list[dict]:
    proc = subprocess.run([str(exe), str(jobs_file(jobs, exe.parent / f"{name}.jobs"))], errors="replace",
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.split("\n")[:-1]  # not splitlines: strings may hold U+2028
    assert len(lines) == len(jobs)
    return [json.loads(line) for line in lines]


def compare(jobs, dumps) -> None:
    for job, theirs in zip(jobs, dumps):
        try:
            check(job, theirs)
        except AssertionError as err:
            raise AssertionError(f"{job.name}: {err}") from None


def test_every_log_and_index_vector_reads_the_same_in_cpp(binary):
    jobs = log_jobs()
    compare(jobs, run(binary, jobs, "logs"))


def test_every_internal_payload_reads_the_same_in_cpp(binary, tmp_path):
    jobs = internal_jobs(tmp_path)
    compare(jobs, run(binary, jobs, "internal"))
    assert len(jobs) > 900  # the vectors the shipped codecs read as Kafka wrote them (shipped_rows)


def test_the_corpus_reads_as_expected_in_cpp(binary, corpus):
    cases = corpus_jobs(corpus)
    for case, theirs in zip(cases, run(binary, cases, "corpus")):
        try:
            check_case(case, theirs)
        except AssertionError as err:
            raise AssertionError(f"{case.name}: {err}") from None


def test_the_exported_cpp_initializes_what_its_clean_up_reads(tmp_path):
    """The official compiler's C++ leaves a switch field's pointer and null flag
    uninitialized until _read reaches them (a corrupt log entry whose length or magic fails
    its check crashed the dump in _clean_up); `kafkacodec export-schemas` mends every
    _read (fix_cpp_read). When the compiler is fixed, the first assertion says so."""
    from kafkacodec.export import compile_schemas, fix_cpp_read

    compile_schemas(tmp_path, ["cpp_stl"])
    raw = (tmp_path / "cpp_stl" / "kafka_log.cpp").read_text()
    read = raw[raw.index("void kafka_log_t::entry_t::_read() {") :]
    read = read[: read.index("\n}\n")]
    assert read.index("length()") < read.index("n_body = true;")  # the check runs first
    assert (
        "m_body = 0;"
        not in raw.split("void kafka_log_t::entry_t::_read()")[0].split("entry_t::entry_t(")[1]
    )
    fixed = fix_cpp_read(read + "\n}\n")
    head = fixed.split("\n")[1:4]
    assert head == ["    n_partial = true;", "    n_body = true;", "    m_body = 0;"]


WIDTHS_CPP = r"""
#include <fstream>
#include <iostream>
#include <sstream>
#include "kafka_record_batch.h"
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        std::ifstream f(argv[i], std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        kaitai::kstream ks(ss.str());
        kafka_record_batch_t b(&ks);
        std::cout << "{\"base_offset\":" << b.base_offset() << ",\"last_offset\":" << b.last_offset()
                  << ",\"crc_to\":" << b.crc_to() << "}" << std::endl;
    }
    return 0;
}
"""


def test_value_instances_leave_32_bits_in_cpp(binary, tmp_path):
    """The official compiler's C++ typed last_offset int32_t (Kafka's largest offsets read
    as -1) until the schema cast it (tests/generator/test_value_widths.py)."""
    objs = [o for o in sorted((binary.parent / "obj").glob("*.o")) if o.stem != "kafkacodec_dump"]
    src = binary.parent / "cpp_stl"
    (tmp_path / "widths.cpp").write_text(WIDTHS_CPP)
    exe = tmp_path / "widths"
    proc = subprocess.run(["g++", "-std=c++11", "-w", f"-I{HERE / 'runtime'}", f"-I{HERE}", f"-I{src}",
                           str(tmp_path / "widths.cpp"), *map(str, objs), "-o", str(exe), "-lz", ZSTD],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    cases = wide_batches(tmp_path)
    out = subprocess.run([str(exe), *(str(p) for p, _ in cases)], capture_output=True, text=True, check=True, timeout=60)
    assert [json.loads(line) for line in out.stdout.splitlines()] == [want for _p, want in cases]


def test_lengths_past_the_input_cost_no_memory_in_cpp(binary, tmp_path):
    """Lengths and counts of up to 2^31 - 1 in inputs of 3 KB, read under a 256 MB address
    space: each refused by a check of the schema itself (a length against what the input
    holds after it), before a read_bytes is asked for it; none by std::bad_alloc. (The
    official runtime's read_bytes allocates the length it is given; the test's runtime
    checks first, so the schema's own refusal is what is asserted.)"""
    import resource

    jobs = greedy_jobs(tmp_path)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))

    proc = subprocess.run([str(binary), str(jobs_file(jobs, tmp_path / "greedy.jobs"))], capture_output=True,
                          text=True, timeout=120, preexec_fn=limit)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = [json.loads(line) for line in proc.stdout.split("\n")[:-1]]
    assert len(got) == len(jobs)
    for job, theirs in zip(jobs, got):
        assert "validation failed" in theirs.get("message", ""), (job.name, theirs)


def test_lengths_that_disagree_with_their_fields_are_refused_in_cpp(binary, tmp_path):
    """A record's length one more or one less than its fields, bytes after a batch's last
    record: refused as Kafka refuses them (the schemas read a record's body and the records
    region as sized substreams that their structures take to the last byte)."""
    jobs = disagreeing_lengths(tmp_path)
    check_refused(jobs, run(binary, jobs, "lengths"))


def test_mutations_read_as_kafkacodec_reads_them_without_crc_checks(binary, tmp_path):
    """Seeded mutations of the shared vectors (peers/bytewise.py): every one kafkacodec
    reads without CRC checks is read to the same values, every one it refuses is refused,
    but for the kinds crosslang.KNOWN_GAPS names (counted in the output)."""
    jobs = mutated_jobs(tmp_path / "mutations", seed=54, count=MUTATIONS)
    check_mutations(jobs, run(binary, jobs, "mutations"))


CODECS_CPP = r"""
#include <iostream>
#include <string>
#include "kafka_compression.h"
static std::string unhex(const std::string& h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back((char) std::stoi(h.substr(i, 2), nullptr, 16));
    return out;
}
int main() {
    int codec, magic;
    std::string hex;
    while (std::cin >> codec >> magic >> hex) {
        try {
            std::string got = kafka_compression_t(codec, magic).decode(hex == "-" ? std::string() : unhex(hex));
            static const char* d = "0123456789abcdef";
            std::string out = "=";
            for (unsigned char c : got) { out.push_back(d[c >> 4]); out.push_back(d[c & 15]); }
            std::cout << out << "\n";
        } catch (const std::exception&) {
            std::cout << "refused\n";
        }
    }
    return 0;
}
"""


def test_codec_edges_read_as_kafka_reads_them_in_cpp(tmp_path):
    """The test's kafka_compression.h keeps Kafka's rules for LZ4 frames and for the bytes
    after a gzip, snappy or zstd stream (crosslang.codec_edges)."""
    (tmp_path / "codecs.cpp").write_text(CODECS_CPP)
    exe = tmp_path / "codecs"
    proc = subprocess.run(["g++", "-std=c++11", "-w", f"-I{HERE}", f"-I{HERE / 'runtime'}", str(tmp_path / "codecs.cpp"),
                           "-o", str(exe), "-lz", ZSTD], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = subprocess.run([str(exe)], input=codec_input(codec_edges()),
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()  # fmt: skip
    check_codec_edges(got)
