"""Real Kafka brokers for the tests (the `kafka` marker): Apache Kafka's own broker, tools
and Java client from Maven Central (harness/pom.xml; the Makefile resolves each release's
classpath into harness/target/cp-VERSION.txt), run on 127.0.0.1.

A Broker formats its storage (kafka.tools.StorageTool) and runs a single-node KRaft broker
and controller on free ports with a private log.dirs and a log4j2 configuration whose
lines the tests read (server.log); it stops cleanly (SIGTERM: Kafka writes
.kafka_cleanshutdown) or is killed (SIGKILL: the next start runs LogLoader's recovery).
`client(...)` runs harness/src/KafkacodecClient.java, compiled once per release against
that release's kafka-clients: it produces workloads, consumes what a consumer fetches, and
lists offsets as Admin.listOffsets answers them, as JSON."""

from __future__ import annotations

import atexit
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

from kafkacodec.internal.dump_format import RELEASES

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "harness"
#: The releases the tests run: the oldest 4.x and the newest one that resolves (Makefile:
#: KAFKA_VERSIONS).
VERSIONS = ("4.0.0", "4.4.0")


#: PySpark's release, and the release of Spark's own Kafka source the tests compare the
#: kafkacodec format with (Makefile: SPARK_VERSION).
SPARK_VERSION = "4.2.0"


def spark_kafka_jars() -> list[str]:
    """Spark's Kafka source (spark-sql-kafka-0-10 at PySpark's version) and what it needs
    beyond PySpark's own jars (harness/target/spark-kafka-VERSION.txt), for spark.jars."""
    import pyspark

    if pyspark.__version__ != SPARK_VERSION:
        raise HarnessError(f"PySpark {pyspark.__version__} is installed; Spark's Kafka source is "
                           f"resolved at {SPARK_VERSION} (the Makefile installs that PySpark)")  # fmt: skip
    cp = HARNESS / "target" / f"spark-kafka-{SPARK_VERSION}.txt"
    if not cp.exists():
        raise HarnessError(f"{cp} is missing: `make harness` resolves Spark's Kafka source")
    bundled = {re.sub(r"-[0-9][^-]*\.jar$", "", j.name) for j in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}
    return [j for j in cp.read_text().strip().split(":")
            if re.sub(r"-[0-9][^-]*\.jar$", "", Path(j).name) not in bundled]  # fmt: skip


class HarnessError(RuntimeError):
    """A broker or a tool that did not do what the test needs (its log's tail attached)."""


#: Every release whose kafka-dump-log the dump texts are compared with: every release
#: `dump --kafka-version` takes (dump_format.RELEASES; Makefile: TOOL_VERSIONS resolves
#: each one's tool from Maven Central, harness/tools/pom.xml).
DUMP_RELEASES = tuple(p for patches in RELEASES.values() for p in patches)


def classpath(version: str) -> str:
    """A release's broker, tools and client (harness/target/cp-VERSION.txt), else, for a
    release the tests only run kafka-dump-log of, its tools (tools-VERSION.txt)."""
    cp = HARNESS / "target" / f"cp-{version}.txt"
    if not cp.exists():
        cp = HARNESS / "target" / f"tools-{version}.txt"
    if not cp.exists():
        raise HarnessError(f"{cp} is missing: `make harness` resolves Kafka {version} from Maven Central")
    return cp.read_text().strip()


def tiered_classpath(version: str) -> str:
    """Kafka's LocalTieredStorage (kafka-storage's test jar) for a release's broker: the
    Makefile's harness/target/tiered-VERSION.txt. A release that published no test jars
    (4.4.0) gets the newest published release's, whose test sources come along: the plugin's
    classes are compiled from them against the broker's jars (once), with the one change 4.4
    asks (LogContext moved to org.apache.kafka.common.utils.internals)."""
    cp = HARNESS / "target" / f"tiered-{version}.txt"
    if not cp.exists():
        raise HarnessError(f"{cp} is missing: `make harness` resolves it from Maven Central")
    jars = cp.read_text().strip().split(os.pathsep)
    sources = [j for j in jars if j.endswith("-test-sources.jar")]
    jars = [j for j in jars if j not in sources and "kafka-storage-" not in Path(j).name]
    if not sources:
        return cp.read_text().strip()
    out = HARNESS / "target" / f"tiered-classes-{version}"
    if not out.is_dir():
        import zipfile

        staging = Path(tempfile.mkdtemp(prefix=f"tiered-classes-{version}-", dir=HARNESS / "target"))
        src = staging / "src"
        package = "org/apache/kafka/server/log/remote/storage/"
        with zipfile.ZipFile(sources[0]) as z:  # the plugin, not the tests beside it
            names = [n for n in z.namelist() if n.startswith(package) and n.endswith(".java")
                     and "/" not in n[len(package):] and not n.endswith("Test.java")]  # fmt: skip
            for n in names:
                text = z.read(n).decode("utf-8")
                text = text.replace("import org.apache.kafka.common.utils.LogContext;",
                                    "import org.apache.kafka.common.utils.internals.LogContext;")  # fmt: skip
                (src / n).parent.mkdir(parents=True, exist_ok=True)
                (src / n).write_text(text)
        classes = staging / "classes"
        res = subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", os.pathsep.join([classpath(version), *jars]),
                              *map(str, sorted(src.rglob("*.java")))], capture_output=True, text=True, timeout=300)  # fmt: skip
        if res.returncode != 0:
            raise HarnessError(f"javac of LocalTieredStorage ({sources[0]}) for Kafka {version}: {res.stderr[-3000:]}")
        try:
            classes.rename(out)
        except OSError:  # made meanwhile by another worker
            pass
        shutil.rmtree(staging, ignore_errors=True)
    return os.pathsep.join([str(out), *jars])


#: Kafka's RemoteStorageManager for tests: segments copied to a directory of the disk
#: (<dir>/kafka-tiered-storage/<topic>-<partition>-<topicId>/<offset>-<segmentId>.<type>).
LOCAL_TIERED_STORAGE = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"


def libs(version: str) -> Path:
    """The release's jars in one folder, as a Kafka distribution's libs/ holds them (links
    into Maven's local repository; `make specs` makes the same): what `kafkacodec specs`
    and `--specs` read a release's message specs from."""
    out = HARNESS / "target" / f"libs-{version}"
    if not out.is_dir():
        staging = Path(tempfile.mkdtemp(prefix=f"libs-{version}-", dir=HARNESS / "target"))
        for jar in classpath(version).split(os.pathsep):
            (staging / Path(jar).name).symlink_to(jar)
        try:
            staging.rename(out)
        except OSError:  # made meanwhile by another worker
            shutil.rmtree(staging)
    return out


#: The folder `specs import` reads a spec's topic from -> (the jar that ships it, the
#: directory inside the jar).
SPEC_JARS = {
    "clients": ("kafka-clients", "common/message"),
    "group-coordinator": ("kafka-group-coordinator", "common/message"),
    "transaction-coordinator": ("kafka-transaction-coordinator", "common/message"),
    "share-coordinator": ("kafka-share-coordinator", "common/message"),
    "metadata": ("kafka-metadata", "common/metadata"),
    "raft": ("kafka-raft", "common/message"),
    "storage": ("kafka-storage", "message"),
}


def release_specs(version: str, dest: Path) -> Path:
    """Every JSON spec of the release's jars, in the folders `specs import` reads."""
    jars = {Path(j).name: Path(j) for j in classpath(version).split(":")}
    for folder, (artifact, _inside) in SPEC_JARS.items():
        with zipfile.ZipFile(jars[f"{artifact}-{version}.jar"]) as z:
            for name in z.namelist():
                if name.endswith(".json"):
                    out = dest / folder / name
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(z.read(name))
    return dest


def raw(spec: Path) -> dict:
    """A spec file as JSON (Kafka's specs carry // comments)."""
    return json.loads("\n".join(line for line in spec.read_text().splitlines()
                                if not re.match(r"\s*//", line)))  # fmt: skip


def for_release(source: str, cp: str) -> str:
    """Java source written against kafka-clients' record classes, for the release on cp:
    4.4 moved them (and the utils they use) to internal packages."""
    clients = next(j for j in cp.split(":") if "/kafka-clients-" in j)
    if "org/apache/kafka/common/record/internal/MemoryRecords.class" not in zipfile.ZipFile(clients).namelist():
        return source
    source = source.replace("org.apache.kafka.common.record.", "org.apache.kafka.common.record.internal.")
    return source.replace("org.apache.kafka.common.utils.", "org.apache.kafka.common.utils.internals.")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def java(version: str, main: str, *args, cp_extra: str = "", timeout: float = 300,
         check: bool = True, jvm: tuple[str, ...] = ()) -> subprocess.CompletedProcess:  # fmt: skip
    """One of Kafka's classes (or the client program) run to its end."""
    cp = classpath(version) + (os.pathsep + cp_extra if cp_extra else "")
    res = subprocess.run(["java", "-Xmx512m", *jvm, "-cp", cp, main, *map(str, args)],
                         capture_output=True, text=True, timeout=timeout)  # fmt: skip
    if check and res.returncode != 0:
        raise HarnessError(f"{main} {' '.join(map(str, args))} exited {res.returncode}:\n"
                           f"{res.stdout[-3000:]}\n{res.stderr[-3000:]}")  # fmt: skip
    return res


_CLIENT: dict[str, Path] = {}


def client_classes(version: str, build: Path) -> Path:
    """harness/src/KafkacodecClient.java compiled against this release's client (once)."""
    if version not in _CLIENT:
        out = build / f"client-{version}"
        out.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(["javac", "-d", str(out), "-cp", classpath(version),
                              str(HARNESS / "src" / "KafkacodecClient.java")],
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        if res.returncode != 0:
            raise HarnessError(f"javac: {res.stderr[-3000:]}")
        _CLIENT[version] = out
    return _CLIENT[version]


_RUNNING: set[subprocess.Popen] = set()


@atexit.register
def _kill_left_over() -> None:
    """No broker outlives the test process, whatever a fixture did not get to stop."""
    for proc in list(_RUNNING):
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class Broker:
    """A single-node KRaft broker and controller of one Kafka release, in root/."""

    def __init__(self, version: str, root: Path, *, tiered: bool = False, **props) -> None:
        """`tiered`: tiered storage enabled (KIP-405) with LocalTieredStorage writing to
        root/tiered, the remote log manager's tasks and the retention check every 500 ms (a
        topic created with remote_storage_enable="true" and a small local_retention_ms has
        its rolled segments copied, then their local copies deleted, within seconds)."""
        self.version, self.root = version, Path(root)
        self.log_dir = self.root / "logs"
        #: LocalTieredStorage's directory (its files under kafka-tiered-storage/), if tiered.
        self.tiered_dir = self.root / "tiered" if tiered else None
        self.props = {
            "process.roles": "broker,controller", "node.id": "1",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.log_dir), "num.partitions": "1",
            "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "2",
            "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "2", "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1", "share.coordinator.state.topic.num.partitions": "2",
            "group.initial.rebalance.delay.ms": "0", "log.flush.start.offset.checkpoint.interval.ms": "1000",
            # the tests' records carry fixed timestamps (2023): no retention by time
            "log.retention.ms": "-1",
            **({"remote.log.storage.system.enable": "true",
                "remote.log.storage.manager.class.name": LOCAL_TIERED_STORAGE,
                "rsm.config.dir": str(self.tiered_dir),
                "remote.log.metadata.manager.listener.name": "PLAINTEXT",
                "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
                "rlmm.config.remote.log.metadata.topic.num.partitions": "3",
                "remote.log.manager.task.interval.ms": "500",
                "log.retention.check.interval.ms": "500"} if tiered else {}),
            **{k.replace("_", "."): str(v) for k, v in props.items()},
        }  # fmt: skip
        self.proc: subprocess.Popen | None = None
        self.formatted = False
        self._new_ports()

    def _new_ports(self) -> None:
        """Free ports for the listeners: picked anew at each start, since a port the last
        run listened on may still be held (a connection of its in TIME_WAIT) when the
        broker comes back; a static KRaft voter is known by its node id, not its port."""
        self.port, self.controller_port = _free_port(), _free_port()
        self.props.update({
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
        })  # fmt: skip
        self.started = False

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def server_log(self) -> Path:
        return self.root / "server.log"

    def _write_config(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        conf = self.root / "server.properties"
        conf.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        (self.root / "log4j2.properties").write_text(
            "appender.f.type = File\nappender.f.name = F\n"
            f"appender.f.fileName = {self.server_log}\nappender.f.layout.type = PatternLayout\n"
            "appender.f.layout.pattern = [%d] %p %m (%c)%n\n"
            "rootLogger.level = INFO\nrootLogger.appenderRef.f.ref = F\n"
        )  # fmt: skip
        return conf

    def format(self) -> None:
        conf = self._write_config()
        cluster = java(self.version, "kafka.tools.StorageTool", "random-uuid").stdout.strip().splitlines()[-1]
        java(self.version, "kafka.tools.StorageTool", "format", "-t", cluster, "-c", conf)
        self.formatted = True

    #: The JVM's heap.
    HEAP = "-Xmx768m"

    @property
    def name(self) -> str:
        return f"Kafka {self.version}"

    def start(self, timeout: float = 120) -> Broker:
        """Start it (formatting storage the first time) and wait until it serves."""
        if not self.formatted:
            self.format()
        self.wait_started(self.launch(), timeout)
        return self

    def launch(self) -> int:
        """Start it without waiting (a Cluster waits for several at once): the server log's
        size before the start, for wait_started."""
        if self.started:
            self._new_ports()
        self.started = True
        conf = self._write_config()
        mark = self.server_log.stat().st_size if self.server_log.exists() else 0
        self.proc = subprocess.Popen(
            ["java", self.HEAP, f"-Dlog4j2.configurationFile={self.root / 'log4j2.properties'}",
             "-cp", classpath(self.version) + (os.pathsep + tiered_classpath(self.version) if self.tiered_dir else ""),
             "kafka.Kafka", str(conf)],
            stdout=open(self.root / "stdout", "ab"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        _RUNNING.add(self.proc)
        return mark

    def wait_started(self, mark: int, timeout: float = 120) -> None:
        """Until its server log says it started (after `mark`)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise HarnessError(f"{self.name} exited:\n{self.tail()}")
            if "Kafka Server started" in self.log_text(mark):
                return
            time.sleep(0.2)
        self.kill()
        raise HarnessError(f"{self.name} did not start in {timeout} s:\n{self.tail()}")

    def log_text(self, since: int = 0) -> str:
        if not self.server_log.exists():
            return ""
        with open(self.server_log, "rb") as f:
            f.seek(since)
            return f.read().decode("utf-8", "replace")

    def lines(self, pattern: str, since: int = 0) -> list[str]:
        """The server log's lines matching a regular expression."""
        return [line for line in self.log_text(since).splitlines() if re.search(pattern, line)]

    def tail(self, n: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-n:])

    def stop(self, timeout: float = 120) -> None:
        """A clean shutdown (SIGTERM): Kafka flushes, checkpoints and writes
        .kafka_cleanshutdown in each log dir."""
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise HarnessError(f"Kafka {self.version} did not stop in {timeout} s:\n{self.tail()}") from None
        self.proc = None

    def kill(self) -> None:
        """An unclean shutdown (SIGKILL): the next start recovers every partition."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    # -- the client program
    def client(self, build: Path, *args) -> subprocess.CompletedProcess:
        return java(self.version, "KafkacodecClient", *args,
                    cp_extra=str(client_classes(self.version, build)))  # fmt: skip

    def create_topic(self, build: Path, topic: str, partitions: int = 1, **configs) -> None:
        self.client(build, "create", self.bootstrap, topic, partitions,
                    *(f"{k.replace('_', '.')}={v}" for k, v in configs.items()))  # fmt: skip

    def produce(self, build: Path, spec: dict) -> None:
        path = build / f"spec-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(spec))
        self.client(build, "produce", self.bootstrap, path)

    def consume(self, build: Path, topic: str, isolation: str = "read_uncommitted") -> list[dict]:
        out = build / f"consumed-{topic}-{isolation}.jsonl"
        self.client(build, "consume", self.bootstrap, topic, isolation, out)
        return [json.loads(line) for line in out.read_text().splitlines()]

    def list_offsets(self, build: Path, topic: str, *timestamps: int) -> dict:
        out = build / f"offsets-{topic}.json"
        self.client(build, "offsets", self.bootstrap, topic, out, *timestamps)
        return json.loads(out.read_text())

    def transplant(self, partition: str, source: Path) -> None:
        """Bring a partition's files to this (stopped) broker as an operator does: the
        topic was created through the broker (its partition.metadata names the topic id a
        KRaft broker knows; a directory it does not know it renames to *-stray), so every
        file of the partition directory but partition.metadata is replaced by source's; the
        clean-shutdown file goes, so that the next start recovers every segment."""
        assert self.proc is None, "stop the broker first"
        d = self.log_dir / partition
        for f in d.iterdir():
            if f.name != "partition.metadata":
                f.unlink()
        for f in Path(source).iterdir():
            if f.is_file() and f.name != "partition.metadata":
                shutil.copy2(f, d / f.name)
        (self.log_dir / ".kafka_cleanshutdown").unlink(missing_ok=True)

    def delete_records(self, build: Path, topic: str, before: dict[int, int]) -> None:
        """Admin.deleteRecords: each partition's log start offset moved up to before[p]."""
        self.client(build, "delete-records", self.bootstrap, topic, *(f"{p}={o}" for p, o in before.items()))

    def share(self, build: Path, group: str, topic: str, count: int) -> list[dict]:
        """A share group's member acknowledging `count` records of the topic (releasing and
        rejecting some on the way), then committing: the partitions and offsets accepted."""
        out = build / f"shared-{group}.jsonl"
        self.client(build, "share", self.bootstrap, group, topic, count, out)
        return [json.loads(line) for line in out.read_text().splitlines() if line]

    def commit(self, build: Path, group: str, protocol: str, topic: str, offsets: dict[int, int]) -> None:
        """Offsets committed by a member of a group ("classic" or "consumer" protocol)."""
        self.client(build, "commit", self.bootstrap, group, protocol, topic,
                    *(f"{p}={o}" for p, o in offsets.items()))  # fmt: skip

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.kill()


class Node(Broker):
    """One node of a multi-node KRaft cluster (Cluster): a broker or a controller, with its
    own log.dirs (several: JBOD) and the cluster's static controller quorum."""

    def __init__(self, version: str, root: Path, *, node_id: int, roles: str, quorum: dict,
                 log_dirs: list[Path], **props) -> None:  # fmt: skip
        self.node_id, self.roles, self.quorum, self.log_dirs = node_id, roles, quorum, list(log_dirs)
        super().__init__(version, root, **props)
        self.log_dir = self.log_dirs[0]
        self.props.update({"process.roles": roles, "node.id": str(node_id),
                           "log.dirs": ",".join(map(str, self.log_dirs))})  # fmt: skip
        self._new_ports()

    def _new_ports(self) -> None:
        """A controller keeps its port (the quorum's voters name it); a broker takes a new
        one at each start (Broker._new_ports' reason)."""
        if not hasattr(self, "quorum"):  # (Broker.__init__'s call, before Node's fields)
            return
        voters = ",".join(f"{n}@127.0.0.1:{port}" for n, port in sorted(self.quorum.items()))
        if "controller" in self.roles:
            port = self.quorum[self.node_id]
            self.port = self.controller_port = port
            self.props.update({"controller.quorum.voters": voters,
                               "listeners": f"CONTROLLER://127.0.0.1:{port}"})  # fmt: skip
            self.props.pop("advertised.listeners", None)
        else:
            self.port = _free_port()
            self.props.update({
                "controller.quorum.voters": voters, "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
                "inter.broker.listener.name": "PLAINTEXT",
            })  # fmt: skip
        self.started = False

    HEAP = "-Xmx512m"

    @property
    def name(self) -> str:
        return f"Kafka {self.version} node {self.node_id}"

    def format_as(self, cluster_id: str) -> None:
        conf = self._write_config()
        java(self.version, "kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", conf)
        self.formatted = True


class Cluster:
    """A KRaft cluster on 127.0.0.1: one controller (node 100, its own metadata log dir)
    and `brokers` brokers (nodes 1..n), those in `jbod` with two log.dirs. Internal topics
    replicated 3 ways (at most the brokers). Brokers are fenced 2 s after they stop
    heartbeating, so that a killed leader's partitions move on quickly."""

    CONTROLLER = 100

    def __init__(self, version: str, root: Path, *, brokers: int = 3, jbod: tuple[int, ...] = (3,),
                 **props) -> None:  # fmt: skip
        self.version, self.root = version, Path(root)
        quorum = {self.CONTROLLER: _free_port()}
        rf = str(min(3, brokers))
        common = {"offsets_topic_replication_factor": rf, "transaction_state_log_replication_factor": rf,
                  "transaction_state_log_min_isr": "1", "broker_session_timeout_ms": "2000",
                  "broker_heartbeat_interval_ms": "500", **props}  # fmt: skip
        base = self.root / "controller"
        self.controller = Node(version, base, node_id=self.CONTROLLER, roles="controller", quorum=quorum,
                               log_dirs=[base / "metadata"], **common)  # fmt: skip
        self.brokers: dict[int, Node] = {}
        for n in range(1, brokers + 1):
            home = self.root / f"broker-{n}"
            dirs = [home / "logs-a", home / "logs-b"] if n in jbod else [home / "logs"]
            self.brokers[n] = Node(version, home, node_id=n, roles="broker", quorum=quorum, log_dirs=dirs, **common)
        self.cluster_id = None

    @property
    def nodes(self) -> list[Node]:
        return [self.controller, *self.brokers.values()]

    @property
    def bootstrap(self) -> str:
        live = [b.bootstrap for b in self.brokers.values() if b.proc is not None]
        if not live:
            raise HarnessError("no broker of the cluster runs")
        return ",".join(live)

    def start(self, *ids: int, timeout: float = 180) -> Cluster:
        """The controller (if down) and the brokers named (all by default), started at
        once, waited for together."""
        if self.cluster_id is None:
            self.cluster_id = java(self.version, "kafka.tools.StorageTool", "random-uuid").stdout.strip().splitlines()[-1]
            for node in self.nodes:
                node.format_as(self.cluster_id)
        if self.controller.proc is None:
            self.controller.start(timeout)
        todo = [self.brokers[i] for i in (ids or self.brokers)]
        marks = [(b, b.launch()) for b in todo if b.proc is None]
        for b, mark in marks:
            b.wait_started(mark, timeout)
        return self

    def stop(self, *ids: int) -> None:
        """Clean shutdowns of the brokers named (all, then the controller, by default)."""
        for i in ids or list(self.brokers):
            self.brokers[i].stop()
        if not ids:
            self.controller.stop()

    def kill(self, *ids: int) -> None:
        for i in ids or list(self.brokers):
            self.brokers[i].kill()
        if not ids:
            self.controller.kill()

    def log_dirs(self) -> list[Path]:
        """Every log dir of every node: what a copy of the cluster's disks holds."""
        return [d for node in self.nodes for d in node.log_dirs]

    def copy_disks(self, dest: Path) -> list[Path]:
        """The nodes' log dirs copied (stopped nodes: a consistent copy), as an operator
        copies them off the machines: dest/<node>/<log dir>, times kept."""
        out = []
        for node in self.nodes:
            for d in node.log_dirs:
                target = Path(dest) / node.root.name / d.name
                shutil.copytree(d, target, symlinks=True)
                out.append(target)
        return out

    def client(self, build: Path, *args) -> subprocess.CompletedProcess:
        return java(self.version, "KafkacodecClient", *args, cp_extra=str(client_classes(self.version, build)))

    def describe(self, build: Path, topic: str) -> dict:
        out = build / f"describe-{topic}-{time.monotonic_ns()}.json"
        self.client(build, "describe", self.bootstrap, topic, out)
        return {int(p): v for p, v in json.loads(out.read_text()).items()}

    def list_offsets(self, build: Path, topic: str, *timestamps: int) -> dict:
        """Admin.listOffsets' answers by partition (Broker.list_offsets')."""
        out = build / f"offsets-{topic}-{time.monotonic_ns()}.json"
        self.client(build, "offsets", self.bootstrap, topic, out, *timestamps)
        return json.loads(out.read_text())

    def client_consume(self, build: Path, topic: str, isolation: str = "read_uncommitted") -> list[dict]:
        """Every record a consumer fetches from the topic (Broker.consume's)."""
        out = build / f"consumed-{topic}-{isolation}-{time.monotonic_ns()}.jsonl"
        self.client(build, "consume", self.bootstrap, topic, isolation, out)
        return [json.loads(line) for line in out.read_text().splitlines()]

    def wait_for(self, build: Path, topic: str, check, timeout: float = 60) -> dict:
        """Admin.describeTopics until check(partitions) holds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                parts = self.describe(build, topic)
                if check(parts):
                    return parts
            except HarnessError:
                parts = None
            if time.monotonic() > deadline:
                raise HarnessError(f"{topic}: not as expected after {timeout} s: {parts}")
            time.sleep(0.5)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.kill()


#: The releases whose brokers have share groups (KIP-932) on from the start (the
#: share.version feature finalized when storage is formatted): of those the tests run,
#: 4.4.0; 4.0.0's are early access, off.
SHARE_GROUPS = ("4.4.0",)


def small_segments(broker: Broker, build: Path) -> dict:
    """The topic config for 16 kB segments: segment.bytes up to Kafka 4.0; from the release
    whose segment.bytes must be at least 1 MB (KIP-1030), its internal.segment.bytes."""
    try:
        broker.create_topic(build, "probe-segment-bytes", 1, segment_bytes=16384)
        return {"segment_bytes": 16384}
    except HarnessError:
        return {"internal_segment_bytes": 16384}


#: The releases whose kafka-shell (MetadataShell) is on Maven Central (Makefile:
#: SHELL_VERSIONS): not 4.4.0's, and 4.3.1's cannot read 4.4.0's metadata (feature level 33
#: is unknown to it). For every release, the client program's metadata-image replays a
#: metadata log through the release's own image classes, as the shell does.
SHELL_VERSIONS = ("4.0.0",)


def metadata_shell(version: str, *args, timeout: float = 300) -> str:
    """Kafka's MetadataShell (kafka-metadata-shell) of a release (SHELL_VERSIONS), on its
    own classpath (harness/target/shell-VERSION.txt): its stdout."""
    cp = HARNESS / "target" / f"shell-{version}.txt"
    if not cp.exists():
        raise HarnessError(f"{cp} is missing: `make harness` resolves it from Maven Central")
    res = subprocess.run(["java", "-Xmx512m", "-cp", cp.read_text().strip(), "org.apache.kafka.shell.MetadataShell",
                          *map(str, args)], capture_output=True, text=True, timeout=timeout)  # fmt: skip
    if res.returncode != 0:
        raise HarnessError(f"MetadataShell {' '.join(map(str, args))} exited {res.returncode}:\n{res.stderr[-3000:]}")
    return res.stdout


def dump_main(version: str) -> str:
    """Kafka's DumpLogSegments class of a release: it moved from the broker's jar
    (kafka.tools) to kafka-tools (org.apache.kafka.tools) in 4.3."""
    import zipfile

    jars = [j for j in classpath(version).split(os.pathsep) if "kafka-tools-" in Path(j).name]
    if any("org/apache/kafka/tools/DumpLogSegments.class" in zipfile.ZipFile(j).namelist() for j in jars):
        return "org.apache.kafka.tools.DumpLogSegments"
    return "kafka.tools.DumpLogSegments"


def dump_log_segments(version: str, files, *flags: str) -> str:
    """Kafka's DumpLogSegments (kafka-dump-log) over these files: its stdout."""
    return java(version, dump_main(version), "--files", ",".join(map(str, files)), *flags).stdout


_DUMP_MANY: dict[str, Path] = {}


def dump_many(version: str, runs: list[list[str]], build: Path) -> list[tuple[str, str]]:
    """kafka-dump-log of a release run with each of runs' arguments, in one JVM
    (harness/src/DumpMany.java): (stdout, "ok" or the exception that ended it) of each."""
    if version not in _DUMP_MANY:
        out = build / "dump-many"
        out.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(["javac", "-d", str(out), str(HARNESS / "src" / "DumpMany.java")],
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        if res.returncode != 0:
            raise HarnessError(f"javac: {res.stderr[-3000:]}")
        _DUMP_MANY[version] = out
    res = subprocess.run(["java", "-Xmx512m", "-cp", f"{classpath(version)}{os.pathsep}{_DUMP_MANY[version]}",
                          "DumpMany", dump_main(version)],
                         input="".join("\t".join(map(str, run)) + "\n" for run in runs),
                         capture_output=True, text=True, timeout=1800)  # fmt: skip
    if res.returncode != 0:
        raise HarnessError(f"DumpMany exited {res.returncode}:\n{res.stderr[-3000:]}")
    out = []
    for n in range(len(runs)):
        body = res.stdout.split(f"\0RUN {n}\n", 1)[1].split(f"\0END {n} ", 1)
        out.append((body[0], body[1].split("\n", 1)[0]))
    return out


def _named(kafka: list[str]) -> list[str]:
    """Kafka's lines with each file named as kafkacodec names it: where Kafka prints the
    path it was given (`Dumping <path>`, `<path> is empty.`, `<path> passed sanity
    check.`), kafkacodec prints the file's name (a deliberate difference, README)."""
    return [re.sub(r"^(Dumping )?/\S*/([^/ ]+)", r"\1\2", line) for line in kafka]


#: A Java double as Double.toString prints it.
_DOUBLE = re.compile(r"-?\d+\.\d+(?:E-?\d+)?")


def _doubles_as_values(line: str) -> str:
    """A line with each double as its value: the harness's JDK 17 prints a few doubles with
    a digit more than the shortest that rounds to them (JDK-4511638, fixed in JDK 19),
    kafkacodec the shortest (as Kafka on JDK 19 and later prints them, kafka_json.java_double)."""
    def value(m: re.Match) -> str:  # (the notation and the exponent kept as printed)
        whole, _, exponent = m.group().partition("E")
        return f"<{float(m.group())!r} {len(whole.split('.')[0])} {exponent}>"

    return _DOUBLE.sub(value, line)


def _same_lines(kafka: list[str], got: list[str], what) -> None:
    for n, (a, b) in enumerate(zip(kafka, got)):
        if a != b and _doubles_as_values(a) == _doubles_as_values(b):
            continue
        assert a == b, f"line {n + 1} of {what}:\n  Kafka:      {a}\n  kafkacodec: {b}"
    assert len(got) == len(kafka), (what, len(got), len(kafka), kafka[len(got):][:3], got[len(kafka):][:3])


def same_dump(version: str, files: list, flags: list[str], ours_flags: list[str] | None = None) -> None:
    """DumpLogSegments and `kafkacodec dump --kafka-version` of that release over the same
    files print the same lines (files named as _named says)."""
    from conftest import kafkacodec_cli

    assert files
    kafka = dump_log_segments(version, files, *flags).splitlines()
    release = ".".join(version.split(".")[:2])
    mine = kafkacodec_cli("dump", "--kafka-version", release, *(flags if ours_flags is None else ours_flags),
               *files, ok=None)  # fmt: skip
    assert "Traceback" not in mine.stderr
    _same_lines(_named(kafka), mine.stdout.splitlines(), flags)


#: ListOffsets' specs as the client program names them, and `kafkacodec lookup`'s targets.
TARGETS = {"latest": -1, "earliest": -2, "max_timestamp": -3, "earliest_local": -4, "latest_tiered": -5}


def not_known(spec: str, want: dict, run) -> bool:
    """Whether `kafkacodec lookup` rightly declined to answer the latest tiered offset Kafka
    answered as none (-1): __remote_log_metadata in the log directory lists nothing of the
    partition, which may be on another broker's (exit 2, saying so)."""
    if spec != "latest_tiered" or want["offset"] != -1 or run.returncode != 2:
        return False
    assert "__remote_log_metadata" in run.stderr and not run.stdout.strip(), run.stderr
    return True


#: The workloads' record timestamps start here (2023-11-14), in CreateTime.
T0 = 1_700_000_000_000


def record(topic: str, i: int, partition: int | None = 0, ts: int | None = None) -> dict:
    """The i-th record of a topic: every fourth key null, every ninth value null, headers
    on odd ones (a null header value among them)."""
    key = None if i % 4 == 3 else f"key-{i % 17}".encode()
    value = None if i % 9 == 8 else (f"value {i} " * (1 + i % 7)).encode()
    headers = [["h", b64(f"{i}".encode())], ["empty", None]] if i % 2 else []
    return {"topic": topic, "partition": partition, "timestamp": T0 + 10 * i if ts is None else ts,
            "key": b64(key), "value": b64(value), "headers": headers}  # fmt: skip


def b64(data) -> str | None:
    """Bytes as the client program's JSON carries them (base64; None for null)."""
    return None if data is None else base64.b64encode(bytes(data)).decode()


def as_consumed(p, *, committed: bool = False, partition: int | None = None) -> list[dict]:
    """What kafkacodec reads from a partition's files (kafkacodec.log.Partition), in the
    shape KafkacodecClient's `consume` writes what Kafka's consumer fetched: data records
    only (a consumer never hands control records to the application), from Kafka's log
    start offset (its log-start-offset-checkpoint's, where a consumer's fetch begins),
    read_committed dropping aborted ones and stopping at the last stable offset;
    `partition` stands for the partition's number when its directory is not named by one."""
    number = p.partition if partition is None else partition
    return [{"partition": number, "offset": r.offset, "timestamp": r.timestamp,
             "timestamp_type": r.timestamp_type, "key": b64(r.key), "value": b64(r.value),
             "headers": [[k, b64(v)] for k, v in r.headers],
             "leader_epoch": batch.partition_leader_epoch if batch.magic == 2 else -1}
            for _seg, batch, r in p.read(p.kafka_log_start_offset() if p.segments else None,
                                         committed_only=committed)
            if r.control is None]  # fmt: skip


def kafkacodec_dumps(runs: list[list[str]]) -> list[dict]:
    """`kafkacodec dump` with each of runs' arguments, in one process (tests/dump_runner.py):
    {"status", "stdout", "stderr"} of each."""
    import sys

    res = subprocess.run([sys.executable, str(ROOT / "tests" / "dump_runner.py")],
                         input="".join(json.dumps(list(map(str, run))) + "\n" for run in runs),
                         capture_output=True, text=True, timeout=1800)  # fmt: skip
    if res.returncode != 0:
        raise HarnessError(f"dump_runner exited {res.returncode}:\n{res.stderr[-3000:]}")
    return [json.loads(line) for line in res.stdout.splitlines()]


def same_dumps(version: str, runs: list[tuple[list, list[str], list[str]]], build: Path) -> None:
    """same_dump for many runs (files, Kafka's flags, kafkacodec's flags) of one release,
    Kafka's in one JVM and kafkacodec's in one process, kafkacodec given the release's own
    specs (`--specs` over its jars) and `--kafka-version` of the release, as a user of that
    release would run it. A run that Kafka ends with an exception is one kafkacodec ends
    with exit status 1 (as it does for records it could not decode, where Kafka's tool
    prints its error and goes on), the lines before it the same."""
    kafka = dump_many(version, [["--files", ",".join(map(str, files)), *flags] for files, flags, _ in runs], build)
    mine = kafkacodec_dumps([["--kafka-version", version, "--specs", libs(version), *ours, *files]
                             for files, _flags, ours in runs])  # fmt: skip
    for (files, flags, _ours), (text, status), got in zip(runs, kafka, mine):
        assert "Traceback" not in got["stderr"], got["stderr"][-2000:]
        what = f"Kafka {version} {' '.join(flags)} over {len(files)} files ({status})"
        _same_lines(_named(text.splitlines()), got["stdout"].splitlines(), what)
        assert got["status"] in (0, 1), (what, got["status"], got["stderr"][-500:])
        assert status == "ok" or got["status"] == 1, (what, got["stderr"][-500:])
