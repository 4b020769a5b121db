"""python -m peers.spark_jvm FILE...: the Spark format's JVM reader (SliceReader, the reader
`format("kafkacodec")` runs in Spark's executors) as a parser of the fuzzing protocol, each
file read as the one segment of a partition (harness/src/SparkJvmPeer.java). peers.fuzz runs
it as --parser kafkacodec-spark; this command reproduces one of its answers. Needs `make jar`
(the format's jar) and pyspark (Spark's own jars)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def spark_jvm_peer(build: Path) -> list[str]:
    """The command of the Spark format's JVM reader as a parser, SparkJvmPeer.java compiled
    into build against `make jar`'s jar and pyspark's jars; ValueError when it cannot be."""
    try:
        import pyspark
    except ImportError:
        raise ValueError("--parser kafkacodec-spark needs pyspark (Spark's jars)") from None
    jar = ROOT / "pipeline" / "jars" / "kafkacodec-spark.jar"
    if not jar.exists():
        raise ValueError(f"--parser kafkacodec-spark reads {jar.relative_to(ROOT)}: run `make jar` first")
    classes = build.resolve() / "spark-peer"
    cp = os.pathsep.join([str(classes), str(jar), str(Path(pyspark.__file__).parent / "jars" / "*")])
    res = subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", cp,
                          str(ROOT / "harness" / "src" / "SparkJvmPeer.java")], capture_output=True, text=True)  # fmt: skip
    if res.returncode:
        raise ValueError(f"--parser kafkacodec-spark: javac: {res.stderr[-2000:]}")
    return ["java", "-XX:+UseSerialGC", "-cp", cp, "io.kafkacodec.spark.SparkJvmPeer"]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    try:
        cmd = spark_jvm_peer(ROOT / "out" / ".peers-build")
    except ValueError as err:
        print(f"peers.spark_jvm: {err}", file=sys.stderr)
        return 2
    return subprocess.call([*cmd, *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
