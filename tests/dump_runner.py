"""`kafkacodec dump` run many times in one process (the release sweeps of
tests/kafka/test_kafka_dump_releases.py and test_kafka_writes.py): each line of standard
input is one run's arguments as a JSON list; each answer one JSON line, {"status": exit
status, "stdout": ..., "stderr": ...}. What one process costs once (its start, the codecs
--specs generates from a release's jars) is paid once for all the runs."""

from __future__ import annotations

import io
import json
import sys


class _Kept(io.BytesIO):
    """What a run wrote, kept when the command (or the wrapper's end) closes its stream."""

    def close(self) -> None:
        pass


def main() -> int:
    from kafkacodec.cli import main as kafkacodec

    real_out, real_err = sys.stdout, sys.stderr
    for line in sys.stdin:
        argv = json.loads(line)
        out, err = _Kept(), _Kept()
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape", newline="\n")
        sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", newline="\n")
        try:
            status = kafkacodec(["dump", *argv])
        except SystemExit as exit_:  # a usage error
            status = exit_.code if isinstance(exit_.code, int) else 2
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.stdout, sys.stderr = real_out, real_err
        real_out.write(json.dumps({"status": status, "stdout": out.getvalue().decode("utf-8", "surrogateescape"),
                                   "stderr": err.getvalue().decode("utf-8", "replace")}) + "\n")  # fmt: skip
        real_out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
