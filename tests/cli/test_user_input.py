"""Input an operator gets wrong, and what the command line says back (issue 55, point 8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafkacodec.sample import write_sized_log_dirs

EXE = Path(sys.executable).parent / "kafkacodec"


def kc(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize("topic,says", [
    ("bad/name", "contains a character other than ASCII alphanumerics"),
    ("..", 'cannot be "." or ".."'),
    ("x" * 300, "can't be longer than 249 characters"),
])  # fmt: skip
def test_sample_takes_the_topic_names_kafka_takes(tmp_path, topic, says):
    done = kc("sample", tmp_path / "out", "--topic", topic, "--records", "10")
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


def test_an_unknown_option_shows_the_commands_usage(tmp_path):
    for args, usage in ((["verify", tmp_path, "--bogus"], "usage: kafkacodec verify"),
                        (["spark", "verify", tmp_path, "--bogus"], "usage: kafkacodec spark verify")):  # fmt: skip
        done = kc(*args)
        assert done.returncode == 2
        assert done.stderr.startswith(usage), done.stderr
        assert "unrecognized arguments: --bogus" in done.stderr


def test_counts_of_one_are_singular(tmp_path):
    logs = Path(write_sized_log_dirs(tmp_path / "logs", records=10, partitions=1)["root"])
    done = kc("verify", logs, "--quiet")
    assert done.stdout.startswith("1 partition, 1 segment, 1 batch, 10 records, "), done.stdout


def test_two_decoders_are_chosen_as_kafka_dump_log_chooses(tmp_path):
    """DumpLogSegments takes the first of offsets, transaction-log, cluster-metadata,
    remote-log-metadata, share-group-state it is given, whatever the order on the line."""
    logs = Path(write_sized_log_dirs(tmp_path / "logs", records=10, partitions=1)["root"])
    done = kc("dump", logs / "sample-0", "--transaction-log-decoder", "--offsets-decoder")
    assert ("--transaction-log-decoder and --offsets-decoder: kafka-dump-log decodes with the first of "
            "offsets, transaction-log") in done.stderr  # fmt: skip
    assert done.stderr.splitlines()[0].endswith("and so does this dump: --offsets-decoder")


def test_export_schemas_names_what_is_wrong_with_out(tmp_path):
    (tmp_path / "file").write_text("")
    done = kc("export-schemas", "--lang", "java", "--out", tmp_path / "file")
    assert done.returncode == 2
    assert done.stderr.strip() == f"kafkacodec export-schemas: {tmp_path / 'file'}: exists and is not a directory"


def test_a_lock_is_named_with_its_folder(tmp_path, monkeypatch):
    """A relative log directory: the .lock an error names is still the folder's."""
    from kafkacodec.runtime.errors import KafkacodecError
    from kafkacodec.storage.fsio import LogDirLock

    (tmp_path / "logs" / ".lock").mkdir(parents=True)  # a .lock that cannot be opened as a file
    monkeypatch.chdir(tmp_path / "logs")
    with pytest.raises(KafkacodecError) as err:
        LogDirLock(".").acquire()
    assert str(err.value).startswith(f"{tmp_path / 'logs' / '.lock'}:"), str(err.value)


def test_recover_counts_are_singular(tmp_path):
    logs = Path(write_sized_log_dirs(tmp_path / "logs", records=10, partitions=1)["root"])
    done = kc("recover", logs / "sample-0")
    assert ": clean, 1 segment, 1 batch, log end offset 10" in done.stdout, done.stdout
