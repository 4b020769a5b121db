"""The Spark jobs through spark-submit: the same arguments as `kafkacodec spark`.

    spark-submit --master spark://head:7077 \\
        --archives kafkacodec-env.tar.gz#environment \\
        --conf spark.pyspark.python=./environment/bin/python \\
        "$(python -m kafkacodec.pipeline.submit --path)" export /shared/kafka /shared/parquet

`--path` prints where this file is (spark-submit takes a file). Under spark-submit the
session is the one spark-submit configured: its master, and its Python for executors; add
`--jars "$(python -m kafkacodec.pipeline.submit --jar)"` for the `kafkacodec` format's JVM
reader (without it, the format is read in Python workers: the same rows, slower).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--path"]:
        print(__file__)
        return 0
    if argv == ["--jar"]:
        from kafkacodec.pipeline import JAR

        if not JAR.is_file():
            print(f"{JAR}: not built (make jar in a checkout)", file=sys.stderr)
            return 1
        print(JAR)
        return 0
    from kafkacodec.pipeline.cli import main as spark  # absolute: spark-submit runs this file

    return spark(argv)


if __name__ == "__main__":
    sys.exit(main())
