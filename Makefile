# Every target creates the virtual environment on first use: a fresh machine needs only make.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: jar rust test test-quick test-kafka drill judge-drill dump-drill cluster-drill fuzz harness specs demo docs bench peers generate check-generated clean

# Apache Kafka from Maven Central for the tests that put a real broker in the loop
# (tests/kafka_broker.py, marker `kafka`): the oldest 4.x release and the newest that
# resolves. Each release's jars go to Maven's local repository, their classpath to
# harness/target/cp-VERSION.txt; Java 17 and Maven run them.
KAFKA_VERSIONS := 4.0.0 4.4.0
# The releases whose kafka-shell (MetadataShell) Maven Central has (not 4.4.0's; 4.3.1's
# cannot read 4.4.0's metadata, whose feature levels it does not know): tests/kafka_broker.py
# SHELL_VERSIONS.
SHELL_VERSIONS := 4.0.0
# PySpark, and Spark's own Kafka source (spark-sql-kafka-0-10) at its exact version: the tests
# compare the kafkacodec format with it row for row (tests/kafka/test_kafka_spark.py) and
# `make bench` times the two. The newest release whose connector Maven Central serves (4.3.0
# is on PyPI, its connector is not).
SPARK_VERSION := 4.2.0
# Every release whose kafka-dump-log (DumpLogSegments, the tool alone: harness/tools/pom.xml)
# `kafkacodec dump --kafka-version` is compared with: every one `--kafka-version` takes
# (kafkacodec/internal/dump_format.py RELEASES; tests/test_packaging.py keeps the two equal).
TOOL_VERSIONS := 3.9.1 3.9.2 4.0.0 4.0.1 4.0.2 4.1.0 4.1.1 4.1.2 4.2.0 4.2.1 4.2.2 4.3.0 4.3.1 4.4.0
HARNESS := $(foreach v,$(KAFKA_VERSIONS),harness/target/cp-$(v).txt harness/target/tiered-$(v).txt) \
	$(foreach v,$(SHELL_VERSIONS),harness/target/shell-$(v).txt) harness/target/spark-kafka-$(SPARK_VERSION).txt \
	$(foreach v,$(TOOL_VERSIONS),harness/target/tools-$(v).txt) harness/target/jacoco.txt harness/target/jazzer.txt

# The JVM reader of the `kafkacodec` Spark format (jvm/: a DataSourceV2 over the schemas' Java
# output from the official compiler, with the official Kaitai Java runtime), in the Python
# package so that kafkacodec.pipeline.jobs.session() puts it on spark.jars. Built against
# the PySpark installed (SPARK_VERSION).
JAR := pipeline/jars/kafkacodec-spark.jar
JVM_SOURCES := $(shell find jvm/src -type f) $(wildcard schemas/*.ksy schemas/*/*.ksy kafkacodec/targets/java/*.java) jvm/pom.xml

$(JAR): $(STAMP) $(JVM_SOURCES)
	@command -v mvn >/dev/null || (apt-get update -q && apt-get install -y -q maven)
	rm -rf jvm/target/generated-sources/kaitai
	$(VENV)/bin/kafkacodec export-schemas --lang java --java-package io.kafkacodec.kaitai \
		--out jvm/target/generated-sources/kaitai-out > /dev/null
	mkdir -p jvm/target/generated-sources && mv jvm/target/generated-sources/kaitai-out/java jvm/target/generated-sources/kaitai
	rm -rf jvm/target/generated-sources/kaitai-out
	mvn -q -B -f jvm/pom.xml package -Dspark.version=$(SPARK_VERSION)
	@# the official Kaitai Java runtime, for tests/crosslang/test_java.py (jvm/target/classes)
	mvn -q -B -f jvm/pom.xml dependency:build-classpath -Dspark.version=$(SPARK_VERSION) \
		-DincludeArtifactIds=kaitai-struct-runtime -Dmdep.outputFile=$(CURDIR)/jvm/target/kaitai-classpath.txt
	mkdir -p pipeline/jars && cp jvm/target/kafkacodec-spark.jar $(JAR)

jar: $(JAR)

# The Rust crate (rust/: the schemas' Rust parsers, generator/rust.py writes rust/src/gen),
# built with the crates its Cargo.lock pins, from crates.io; tests/crosslang/test_rust.py
# reads with its dump program and runs cargo fmt, clippy and test.
RUST_DUMP := rust/target/release/kafkacodec-dump
$(RUST_DUMP): $(shell find rust/src rust/tests -name '*.rs' 2>/dev/null) rust/Cargo.toml rust/Cargo.lock
	@command -v cargo >/dev/null || (echo "the Rust crate needs cargo and rustc (https://rustup.rs)" >&2 && false)
	cd rust && cargo build --release --locked

rust: $(RUST_DUMP)

$(STAMP): pyproject.toml
	@# the native extension's CRC-32 of legacy messages: Intel ISA-L's (Debian's libisal-dev;
	@# about 6x zlib's on a short message), else zlib's (zlib1g-dev); setup.py takes what is there
	@test -f /usr/include/zlib.h || (apt-get update -q && apt-get install -y -q zlib1g-dev)
	@test -f /usr/include/isa-l/crc.h || (apt-get update -q && apt-get install -y -q libisal-dev)
	@# the fuzz tests build the native extensions with clang's sanitizers (python -m fuzz --sanitized)
	@command -v clang >/dev/null || (apt-get update -q && apt-get install -y -q clang)
	@# the docs' pages and the stats report looked at in a real browser (tests/docs/test_pages_render.py)
	@command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)
	@# snappy blocks byte for byte as Kafka writes them: Google's C++ snappy 1.1.x, which
	@# snappy-java bundles (runtime/compression.py loads it through ctypes)
	@ldconfig -p | grep -q libsnappy.so.1 || (apt-get update -q && apt-get install -y -q libsnappy1v5)
	@# the codecs are compared with the Java libraries Kafka's compression classes call
	@# (tests/runtime/test_java_compressors.py): Debian's lz4-java and snappy-java, with JNI
	@test -f /usr/share/java/lz4-java.jar -a -f /usr/share/java/snappy-java.jar || \
		(apt-get update -q && apt-get install -y -q liblz4-java libsnappy-java)
	@# the tiered-storage tests wrap data keys with OpenSSL's command line (RSA-OAEP, SHA3-512)
	@command -v openssl >/dev/null || (apt-get update -q && apt-get install -y -q openssl)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,bench,pipeline]' 'pyspark==$(SPARK_VERSION)'
	cd tests/ksc && npm install --silent --no-audit --no-fund
	touch $(STAMP)

harness/target/cp-%.txt: harness/pom.xml
	@command -v mvn >/dev/null || (apt-get update -q && apt-get install -y -q maven)
	@command -v javac >/dev/null || (apt-get update -q && apt-get install -y -q openjdk-17-jdk-headless)
	mkdir -p harness/target
	mvn -q -B -f harness/pom.xml dependency:build-classpath -Dkafka.version=$* \
		-DexcludeClassifiers=test,test-sources -Dmdep.outputFile=$(CURDIR)/harness/target/cp-$*.txt

# kafka-dump-log of a release on a classpath of its own (harness/tools/pom.xml)
harness/target/tools-%.txt: harness/tools/pom.xml
	@command -v mvn >/dev/null || (apt-get update -q && apt-get install -y -q maven)
	mkdir -p harness/target
	mvn -q -B -f harness/tools/pom.xml dependency:build-classpath -Dkafka.version=$* \
		-Dmdep.outputFile=$(CURDIR)/harness/target/tools-$*.txt

# the tiered-storage plugin (LocalTieredStorage) the brokers of the tiered tests load
harness/target/tiered-%.txt: harness/target/cp-%.txt
	mvn -q -B -f harness/pom.xml dependency:build-classpath -Dkafka.version=$* \
		-DincludeClassifiers=test,test-sources -Dmdep.outputFile=$(CURDIR)/harness/target/tiered-$*.txt

# JaCoCo's agent and core: the branches of Kafka's record classes the fuzz oracle reaches
# (harness/jacoco/pom.xml, peers/coverage.py)
harness/target/jacoco.txt: harness/jacoco/pom.xml
	@command -v mvn >/dev/null || (apt-get update -q && apt-get install -y -q maven)
	mkdir -p harness/target
	mvn -q -B -f harness/jacoco/pom.xml dependency:build-classpath \
		-Dmdep.outputFile=$(CURDIR)/harness/target/jacoco.txt

# Jazzer, coverage-guided fuzzing of the schemas' Java output (harness/jazzer/pom.xml)
harness/target/jazzer.txt: harness/jazzer/pom.xml
	@command -v mvn >/dev/null || (apt-get update -q && apt-get install -y -q maven)
	mkdir -p harness/target
	mvn -q -B -f harness/jazzer/pom.xml dependency:build-classpath \
		-Dmdep.outputFile=$(CURDIR)/harness/target/jazzer.txt

# Kafka's MetadataShell on a classpath of its own release (harness/shell/pom.xml)
harness/target/shell-%.txt: harness/shell/pom.xml
	mkdir -p harness/target
	mvn -q -B -f harness/shell/pom.xml dependency:build-classpath -Dshell.version=$* \
		-Dmdep.outputFile=$(CURDIR)/harness/target/shell-$*.txt

# Spark's Kafka source and what it needs beyond Spark (harness/spark/pom.xml)
harness/target/spark-kafka-%.txt: harness/spark/pom.xml
	mkdir -p harness/target
	mvn -q -B -f harness/spark/pom.xml dependency:build-classpath -Dspark.version=$* \
		-DincludeScope=runtime -Dmdep.outputFile=$(CURDIR)/harness/target/spark-kafka-$*.txt

harness: $(HARNESS)

# Each release's jars in one folder, as a Kafka distribution's libs/ holds them (links into
# Maven's local repository): `kafkacodec specs import` and `specs diff` read the JSON message
# specs inside them.
harness/target/libs-%: harness/target/cp-%.txt
	rm -rf $@ && mkdir -p $@
	tr ':' '\n' < $< | xargs -I{} ln -s {} $@/

# The shipped internal-topic codecs from the newest release's specs: schemas/internal/,
# then generated/ (tests/kafka/test_kafka_specs.py checks that they are these).
NEWEST := $(lastword $(KAFKA_VERSIONS))
specs: $(STAMP) harness/target/libs-$(NEWEST)
	$(PY) -m kafkacodec specs import harness/target/libs-$(NEWEST) --label $(NEWEST)

test: $(STAMP) $(HARNESS) $(JAR) $(RUST_DUMP)
	$(PY) -m pytest -q -n 2 --dist loadfile

# Only the tests that run Kafka's own broker, tools and client.
test-kafka: $(STAMP) $(HARNESS) $(JAR)
	$(PY) -m pytest -q -n 2 --dist loadfile -m kafka

# The whole recovery drill: 200 seeded damaged partitions per release, each predicted by
# kafkacodec and judged by the broker's own load (tests/kafka_drill.py; CI runs a subset).
drill: $(STAMP) $(HARNESS)
	cd tests && ../$(PY) kafka_drill.py --cases 200 --seed 1 --root ../out/drill

# Kafka's record classes of the oldest and newest release judge every reading path of
# kafkacodec on 200,000 seeded mutations of the shared vectors (tests/kafka_mutation_drill.py;
# CI runs a seeded subset: tests/kafka/test_kafka_judges_mutations.py).
judge-drill: $(STAMP) $(HARNESS)
	cd tests && ../$(PY) kafka_mutation_drill.py --cases 200000 --seed 1 --root ../out/judge-drill

# A multi-broker Kafka (a controller, three brokers, one JBOD) judges kafkacodec on a
# cluster's disks: 50 seeded scenarios of each kind (unclean election, lagging follower,
# moved / deleted / reassigned replicas) per release (tests/cluster_drill.py; CI runs a
# subset: tests/kafka/test_kafka_cluster.py).
cluster-drill: $(STAMP) $(HARNESS)
	cd tests && ../$(PY) cluster_drill.py --cases 50 --seed 1 --root ../out/cluster-drill

# Every release's kafka-dump-log and `kafkacodec dump --kafka-version` of it over the
# internal topics' payloads damaged at 20 seeds (tests/dump_drill.py; CI runs seed 1:
# tests/kafka/test_kafka_dump_releases.py).
dump-drill: $(STAMP) $(HARNESS)
	cd tests && ../$(PY) dump_drill.py --seeds 1-20 --root ../out/dump-drill

# Everything but the slow, Spark, fuzzing, cross-language and Kafka-broker tests, on every
# core (about a minute here); `make test` (CI) runs them all.
test-quick: $(STAMP)
	$(PY) -m pytest -q -n auto -m "not slow and not spark and not fuzz and not crosslang and not kafka"

demo: $(STAMP) $(JAR)
	$(PY) -m kafkacodec.demo

# The documentation site (docs/conf.py): docs/ built into site/, every warning an error (a broken
# link, a reference to nothing, a page in no table of contents); the reference pages come
# from the code when it is built. An environment already there is used as it is (a
# pyproject.toml newer than it does not reinstall everything: `make .venv/.installed` does).
docs:
	@test -x $(VENV)/bin/sphinx-build || $(MAKE) $(STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs site

bench: $(STAMP) $(HARNESS) $(JAR)
	@# kcat (Debian's), an anchor of bench.commands: `records` beside it on the same partition
	@command -v kcat >/dev/null || (apt-get update -q && apt-get install -y -q kcat)
	$(PY) -m bench
	$(PY) -m bench.spark_kafka
	$(PY) -m bench.memory
	$(PY) -m bench.internal
	$(PY) -m bench.remote
	$(PY) -m bench.rewrite
	$(PY) -m bench.languages
	$(PY) -m bench.inflate
	$(PY) -m bench.commands
	@# the speed page's charts, from the JSON the benchmarks above wrote (docs/speed/*.svg)
	$(PY) -m bench.charts

# The ecosystem's record decoders over the corpus, written up for their maintainers
# (peers/reports; tests/crosslang/test_peers.py checks that it is current). Needs Go.
peers: $(STAMP)
	$(PY) -m peers --out peers/reports

# Every parser fuzzed against Kafka's classes (peers.fuzz, docs/fuzzing.md): FUZZ_CASES
# schema-aware mutations each, judged by the newest release (one oracle, every target
# reading the same cases), then the branches of Kafka's reading code the corpus, the
# vectors and the cases reach, measured with JaCoCo in the oldest and the newest release
# (peers.coverage). CI runs a seeded subset (tests/kafka/test_kafka_fuzz_peers.py,
# test_kafka_coverage.py).
FUZZ_CASES ?= 1000000
FUZZ_SEED ?= 1
FUZZ_TIME ?= 5m
FUZZ_SECONDS ?= 300
FUZZ_TARGETS := kafkacodec kafkacodec-python kafkacodec-columns kafkacodec-go kafkacodec-rust kafkacodec-spark franz-go sarama kafka-go kafka-protocol rskafka kafka-python aiokafka
fuzz: $(STAMP) $(HARNESS) $(JAR)
	rm -rf peers/fuzz-reports
	$(PY) -m peers.fuzz $(foreach t,$(FUZZ_TARGETS),--parser $(t)) --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) \
		--kafka $(lastword $(KAFKA_VERSIONS)) --out peers/fuzz-reports || test -f peers/fuzz-reports/table.json  # (exit 1: divergences, the report written)
	$(foreach v,$(firstword $(KAFKA_VERSIONS)) $(lastword $(KAFKA_VERSIONS)),$(PY) -m peers.coverage --kafka $(v) \
		--cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --out peers/fuzz-reports/coverage-$(v) &&) true
	@# coverage-guided, seeded with the schema-aware mutations: Go's own fuzzer over the Go
	@# package (go/kafkacodec/fuzz_test.go), atheris over the Python walk (fuzz/)
	rm -rf out/fuzz-seeds && $(PY) -m peers.mutate --cases 20000 --seed $(FUZZ_SEED) --out out/fuzz-seeds
	cd go && KAFKACODEC_SEEDS=$(CURDIR)/out/fuzz-seeds go test -run '^$$' -fuzz FuzzParseKafkaLog \
		-fuzztime $(FUZZ_TIME) ./kafkacodec
	$(PY) -m fuzz batches --seconds $(FUZZ_SECONDS) --corpus out/fuzz-seeds
	@# Jazzer over the schemas' Java output (the official compiler's, as jvm/ builds it)
	rm -rf out/jazzer && mkdir -p out/jazzer/classes
	cp="$(CURDIR)/jvm/target/classes:$$(cat jvm/target/kaitai-classpath.txt):$$(tr ':' '\n' < harness/target/cp-$(lastword $(KAFKA_VERSIONS)).txt \
		| grep -E '/(lz4-java|snappy-java|zstd-jni)-' | tr '\n' ':')" && \
	javac -nowarn -cp "$$cp" -d out/jazzer/classes harness/src/JavaOutputFuzz.java && \
	cd out/jazzer && java -cp "$$(cat ../../harness/target/jazzer.txt):classes:$$cp" com.code_intelligence.jazzer.Jazzer \
		--target_class=JavaOutputFuzz --instrumentation_includes='io.kafkacodec.**' -max_total_time=$(FUZZ_SECONDS) \
		$(CURDIR)/out/fuzz-seeds

generate: $(STAMP)
	$(PY) -m kafkacodec generate

check-generated: $(STAMP)
	$(PY) -m kafkacodec generate --check

clean:
	rm -rf $(VENV) tests/ksc/node_modules harness/target jvm/target pipeline/jars rust/target
