"""Kafka tiered storage (KIP-405) as RemoteStorageManagers lay segments out, read with no
broker: the files of each remote segment (its .log and its indexes) found and opened.

Two layouts:

- Aiven's tiered-storage-for-apache-kafka, the open-source RemoteStorageManager most
  deployments run (facts from its source, io.aiven.kafka.tieredstorage): objects
  `<prefix><topic>-<topicId>/<partition>/<20-digit start offset>-<segmentId>.<suffix>`
  (ObjectKeyFactory; ids are Kafka Uuids, 22 characters of URL-safe base64), suffix `log`,
  `indexes` and `rsm-manifest`; plugins before 0.x wrote one object per index instead
  (`index`, `timeindex`, `snapshot`, `txnindex`, `leader-epoch-checkpoint`). The manifest
  (SegmentManifestV1, JSON, "version": "1") holds the chunk index (the .log cut into chunks
  of originalChunkSize, each transformed on its own: "fixed" sizes without compression,
  "variable" with it, whose sizes are a zstd frame of ChunkSizesBinaryCodec's list in
  base64), the position and size of each index inside the `indexes` object
  (segmentIndexes: offset, timestamp, producerSnapshot, leaderEpoch, transaction, in that
  order), `compression` (each chunk a zstd frame) and `encryption` (each chunk, and each
  index as one chunk, AES-256-GCM: a 12-byte IV, the ciphertext, a 16-byte tag, with the
  segment's AAD; the segment's data key wrapped with the user's RSA key,
  RSA/NONE/OAEPWithSHA3-512AndMGF1Padding under BouncyCastle, i.e. OAEP with SHA3-512 for
  the hash and for MGF1, written "<keyId>:<base64>", or plain base64 by early plugins).
  Indexes are encrypted, never compressed (RemoteStorageManager.transformIndex). With no
  transform the .log object is the segment byte for byte.
- Kafka's own LocalTieredStorage, which Kafka's tiered-storage tests write:
  `<dir>/kafka-tiered-storage/<topic>-<partition>-<topicId>/<start offset>-<segmentId>.<suffix>`
  (RemoteTopicPartitionDirectory, RemoteLogSegmentFileset; the offset 20 digits since
  Kafka 3.7, plain before), suffix log, index, timeindex, txnindex,
  leader_epoch_checkpoint, snapshot: copies of the broker's files.

Reading a range of an Aiven segment fetches the chunks that hold its first and last byte,
in one ranged GET per run of chunks (blob.covering), and transforms them back before they
reach the spool: readers see the segment's own bytes.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

from ..runtime.errors import StorageError
from . import StoragePath, is_remote, read_side_file
from .blob import Blob, SpooledBlob, covering

__all__ = [
    "UUID", "Manifest", "ChunkIndex", "RemoteSegmentFiles", "AivenSegment", "LocalTieredSegment",
    "aiven_segments", "local_tiered_segments", "is_aiven_partition", "is_local_tiered_partition",
    "KeyRing", "decode_chunk_sizes", "INDEX_KINDS", "AIVEN_TOPIC_DIR", "LOCAL_PARTITION_DIR",
    "LOCAL_ROOT", "remote_partition_dir", "segment_files", "missing_files", "REQUIRED",
    "aiven_segment_of", "TieredRoot", "tiered_root", "remote_file_name",
]  # fmt: skip

#: A Kafka Uuid as Uuid.toString() writes it: 16 bytes in 22 characters of URL-safe base64,
#: the last of which holds 2 bits (A, Q, g or w). A partition directory's name ends with a
#: digit, so it is never taken for a <topic>-<topicId> folder.
UUID = r"[A-Za-z0-9_-]{21}[AQgw]"
_AIVEN_FILE = re.compile(rf"^(\d{{20}})-({UUID})\.(log|indexes|rsm-manifest|index|timeindex|snapshot|txnindex|leader-epoch-checkpoint)$")
_LOCAL_FILE = re.compile(rf"^(\d+)-({UUID})\.(log|index|timeindex|txnindex|leader_epoch_checkpoint|snapshot)$")


def remote_file_name(name: str) -> tuple[int, str, str] | None:
    """(start offset, segment id, type) of a file a tiered layout names
    <offset>-<segmentId>.<type> (Aiven's 20-digit offsets, LocalTieredStorage's padded or
    not), else None."""
    m = _AIVEN_FILE.match(name) or _LOCAL_FILE.match(name)
    return (int(m[1]), m[2], m[3]) if m else None


#: Aiven's topic directory, <topic>-<topicId>; LocalTieredStorage's partition directory.
AIVEN_TOPIC_DIR = re.compile(rf"^(?P<topic>.+)-(?P<id>{UUID})$")
LOCAL_PARTITION_DIR = re.compile(rf"^(?P<topic>.+)-(?P<partition>\d+)-(?P<id>{UUID})$")
#: LocalTieredStorage's root folder below its configured directory.
LOCAL_ROOT = "kafka-tiered-storage"
#: The largest manifest read (a 2 GiB segment in 4 KiB chunks lists half a million sizes,
#: a few megabytes of base64 at most).
MANIFEST_LIMIT = 64 << 20
#: TransformedChunksDeserializer.MAX_DECOMPRESSED_SIZE: the plugin refuses more.
CHUNK_SIZES_LIMIT = 10 << 20
IV_SIZE, TAG_SIZE = 12, 16  # SegmentEncryptionMetadataV1.IV_SIZE, GCM's 128-bit tag
#: The index kinds, in the order the plugin concatenates them in the `indexes` object,
#: with the object suffix older plugins and LocalTieredStorage give each.
INDEX_KINDS = {
    "offset": ("index", "index"),
    "timestamp": ("timeindex", "timeindex"),
    "producerSnapshot": ("snapshot", "snapshot"),
    "leaderEpoch": ("leader-epoch-checkpoint", "leader_epoch_checkpoint"),
    "transaction": ("txnindex", "txnindex"),
}


def _error(url: str, message: str) -> StorageError:
    return StorageError(url, message)


# ------------------------------------------------------------------------ the manifest


def decode_chunk_sizes(data: bytes, url: str = "") -> list[int]:
    """ChunkSizesBinaryCodec.decode: int32 count; none more for 0; one int32 for 1; else an
    int32 base, a byte bytesPerValue, count-1 values of that many bytes (big-endian, plus
    the base), and the last value as a full int32."""
    try:
        (count,) = struct.unpack_from(">i", data, 0)
        if count < 0:
            raise ValueError(f"a negative count {count}")
        if count == 0:
            return []
        if count == 1:
            return [struct.unpack_from(">i", data, 4)[0]]
        base, per = struct.unpack_from(">iB", data, 4)
        if not 1 <= per <= 4:
            raise ValueError(f"{per} bytes per value")
        at = 9
        if len(data) != at + (count - 1) * per + 4:
            raise ValueError(f"{len(data)} bytes for {count} values of {per} bytes")
        out = [base + int.from_bytes(data[at + i * per : at + (i + 1) * per], "big")
               for i in range(count - 1)]  # fmt: skip
        out.append(struct.unpack_from(">i", data, at + (count - 1) * per)[0])
        return out
    except (struct.error, ValueError) as err:
        raise _error(url, f"the manifest's transformedChunks is not a list of chunk sizes: {err}") from None


@dataclass(frozen=True)
class ChunkIndex:
    """Where each chunk of the original .log is in the transformed object."""

    original_chunk_size: int
    original_file_size: int
    transformed_sizes: tuple[int, ...]

    @classmethod
    def from_json(cls, doc: Any, url: str) -> ChunkIndex:
        try:
            kind = doc["type"]
            chunk, size = int(doc["originalChunkSize"]), int(doc["originalFileSize"])
            if chunk <= 0 or size < 0:
                raise ValueError(f"chunk size {chunk}, file size {size}")
            count = -(-size // chunk)
            if kind == "fixed":
                fixed, last = int(doc["transformedChunkSize"]), int(doc["finalTransformedChunkSize"])
                sizes = [fixed] * max(count - 1, 0) + ([last] if count else [])
            elif kind == "variable":
                packed = base64.b64decode(doc["transformedChunks"], validate=True)
                sizes = decode_chunk_sizes(_unzstd_small(packed, url), url)
            else:
                raise ValueError(f"unknown chunk index type {kind!r}")
        except (KeyError, TypeError, ValueError) as err:
            raise _error(url, f"the manifest's chunkIndex is not one the plugin writes: {err}") from None
        if len(sizes) != count and not (count == 0 and len(sizes) <= 1):
            raise _error(url, f"the manifest's chunkIndex lists {len(sizes)} chunks, but "
                              f"{size} bytes in chunks of {chunk} make {count}")  # fmt: skip
        if any(s < 0 for s in sizes):
            raise _error(url, "the manifest's chunkIndex has a negative chunk size")
        return cls(chunk, size, tuple(sizes[:count]))

    @property
    def count(self) -> int:
        return len(self.transformed_sizes)

    def original_bounds(self) -> list[int]:
        """The original position where each chunk starts, then the file's size."""
        return [min(i * self.original_chunk_size, self.original_file_size)
                for i in range(self.count)] + [self.original_file_size]  # fmt: skip

    def transformed_starts(self) -> list[int]:
        out, pos = [], 0
        for s in self.transformed_sizes:
            out.append(pos)
            pos += s
        out.append(pos)
        return out

    @property
    def transformed_size(self) -> int:
        return sum(self.transformed_sizes)


def _unzstd_small(data: bytes, url: str) -> bytes:
    """A small zstd frame whose header states its size (the plugin writes it so), refused
    above CHUNK_SIZES_LIMIT as the plugin refuses it."""
    import zstandard

    try:
        size = zstandard.frame_content_size(data)
    except zstandard.ZstdError as err:
        raise _error(url, f"the manifest's transformedChunks is not a zstd frame: {err}") from None
    if size < 0 or size > CHUNK_SIZES_LIMIT:
        raise _error(url, f"the manifest's transformedChunks declares {size} bytes (the plugin "
                          f"reads at most {CHUNK_SIZES_LIMIT})")  # fmt: skip
    try:
        return zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    except zstandard.ZstdError as err:
        raise _error(url, f"the manifest's transformedChunks does not decompress: {err}") from None


class KeyRing:
    """The RSA private keys that unwrap segments' data keys, from the storage options:
    `encryption_key=PEM file` for any key id, `encryption_key.<keyId>=PEM file` for one
    (PKCS#8 or PKCS#1, unencrypted; on a Spark cluster, a path every executor can read).
    Only the paths travel with a pickled segment; each process reads the keys itself."""

    def __init__(self, options: dict):
        self.paths = {k.partition(".")[2]: v for k, v in options.items()
                      if k == "encryption_key" or k.startswith("encryption_key.")}  # fmt: skip
        self._keys: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __getstate__(self):
        return {"paths": self.paths}

    def __setstate__(self, state):
        self.paths = state["paths"]
        self._keys = {}
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self.paths)

    def _key(self, key_id: str, url: str):
        path = self.paths.get(key_id) or self.paths.get("")
        if path is None:
            have = ", ".join(sorted(k or "(any)" for k in self.paths)) or "none"
            raise _error(url, f"the segment is encrypted with key {key_id or '(no id)'}: give its RSA "
                              f"private key (storage option encryption_key=PEM file, or "
                              f"encryption_key.{key_id or 'ID'}=...); keys given: {have}")  # fmt: skip
        with self._lock:
            if path not in self._keys:
                from Crypto.PublicKey import RSA

                try:
                    with open(path, "rb") as f:
                        pem = f.read()
                    key = RSA.import_key(pem)
                    if not key.has_private():
                        raise ValueError("a public key; the private one unwraps data keys")
                    self._keys[path] = key
                except (OSError, ValueError, IndexError, TypeError) as err:
                    raise _error(url, f"cannot read the RSA private key {path}: {err}") from None
            return self._keys[path]

    def unwrap(self, text: str, url: str) -> bytes:
        """The AES data key of a manifest's dataKey ("<keyId>:<base64>", or base64)."""
        from Crypto.Cipher import PKCS1_OAEP
        from Crypto.Hash import SHA3_512
        from Crypto.Signature import pss

        key_id, sep, b64 = text.partition(":")
        if not sep:
            key_id, b64 = "", text
        try:
            wrapped = base64.b64decode(b64, validate=True)
        except ValueError:
            raise _error(url, "the manifest's dataKey is not base64") from None
        key = self._key(key_id, url)
        # OAEPWithSHA3-512AndMGF1Padding as BouncyCastle reads it: SHA3-512 for the hash
        # and for MGF1 (the cryptography package's OAEP takes only SHA-1 and SHA-2)
        oaep = PKCS1_OAEP.new(key, hashAlgo=SHA3_512,
                              mgfunc=lambda seed, n: pss.MGF1(seed, n, SHA3_512))  # fmt: skip
        try:
            return oaep.decrypt(wrapped)
        except (ValueError, TypeError):
            raise _error(url, f"the data key does not unwrap with the RSA key given for "
                              f"{key_id or '(no id)'}: a wrong key") from None  # fmt: skip


@dataclass(frozen=True)
class Encryption:
    """A segment's AES-256-GCM data key and AAD."""

    key: bytes
    aad: bytes

    def decrypt(self, chunk: bytes, url: str, where: str) -> bytes:
        from Crypto.Cipher import AES

        if len(chunk) < IV_SIZE + TAG_SIZE:
            raise _error(url, f"{where}: {len(chunk)} bytes, too few for an encrypted chunk "
                              f"(IV {IV_SIZE} + tag {TAG_SIZE})")  # fmt: skip
        cipher = AES.new(self.key, AES.MODE_GCM, nonce=chunk[:IV_SIZE], mac_len=TAG_SIZE)
        cipher.update(self.aad)
        try:
            return cipher.decrypt_and_verify(chunk[IV_SIZE:-TAG_SIZE], chunk[-TAG_SIZE:])
        except ValueError:
            raise _error(url, f"{where}: does not decrypt with the segment's data key (its "
                              "GCM tag does not match: damaged, or not this segment's)") from None  # fmt: skip


@dataclass(frozen=True)
class Manifest:
    """A segment's .rsm-manifest (SegmentManifestV1)."""

    chunks: ChunkIndex
    compression: bool
    encryption: Encryption | None
    #: (position, size) of each index kind in the `indexes` object; None: older plugins'
    #: objects of their own. A kind the segment has not (no transaction index) is absent.
    indexes: dict[str, tuple[int, int]] | None
    #: From the manifest's remoteLogSegmentMetadata, when written.
    start_offset: int | None = None
    end_offset: int | None = None
    max_timestamp: int | None = None
    leader_epochs: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, data: bytes, url: str, keys: KeyRing) -> Manifest:
        try:
            doc = json.loads(data)
        except (ValueError, UnicodeDecodeError) as err:
            raise _error(url, f"not JSON: {err}") from None
        if not isinstance(doc, dict):
            raise _error(url, "not a segment manifest (a JSON object)")
        if str(doc.get("version", "1")) != "1":
            raise _error(url, f"manifest version {doc.get('version')!r}: only version 1 is known")
        for name in ("chunkIndex", "compression"):
            if name not in doc:
                raise _error(url, f"not a segment manifest: no {name}")
        chunks = ChunkIndex.from_json(doc["chunkIndex"], url)
        enc = None
        if doc.get("encryption") is not None:
            e = doc["encryption"]
            try:
                aad = base64.b64decode(e["aad"], validate=True)
                data_key = e["dataKey"]
            except (KeyError, TypeError, ValueError) as err:
                raise _error(url, f"the manifest's encryption is not one the plugin writes: {err}") from None
            enc = Encryption(keys.unwrap(str(data_key), url), aad)
            if len(enc.key) != 32:
                raise _error(url, f"the data key is {len(enc.key)} bytes, not AES-256's 32")
        indexes = None
        if doc.get("segmentIndexes") is not None:
            indexes = {}
            for kind in INDEX_KINDS:
                entry = doc["segmentIndexes"].get(kind)
                if entry is None:
                    continue
                try:
                    pos, size = int(entry["position"]), int(entry["size"])
                except (KeyError, TypeError, ValueError):
                    raise _error(url, f"segmentIndexes.{kind} has no position and size") from None
                if pos < 0 or size < 0:
                    raise _error(url, f"segmentIndexes.{kind}: position {pos}, size {size}")
                indexes[kind] = (pos, size)
        meta = doc.get("remoteLogSegmentMetadata") or {}
        epochs = tuple(sorted((int(k), int(v)) for k, v in (meta.get("segmentLeaderEpochs") or {}).items()))
        return cls(chunks, bool(doc["compression"]), enc, indexes, _int(meta, "startOffset"),
                   _int(meta, "endOffset"), _int(meta, "maxTimestampMs"), epochs)  # fmt: skip


def _int(d: dict, key: str) -> int | None:
    v = d.get(key)
    return int(v) if isinstance(v, (int, str)) and str(v).lstrip("-").isdigit() else None


# ------------------------------------------------------------------------ the segments


@dataclass
class RemoteSegmentFiles:
    """A remote segment's files, as a layout names them: its start offset and id, the
    partition directory, the .log and each index by kind (absent: not there)."""

    directory: StoragePath
    start_offset: int
    segment_id: str
    log: StoragePath | None
    files: dict[str, StoragePath] = field(default_factory=dict)  # kind -> file
    layout: str = ""

    @property
    def name(self) -> str:
        return f"{self.start_offset:020d}-{self.segment_id}"

    def open_log(self) -> Blob:
        raise NotImplementedError

    def index_bytes(self, kind: str) -> bytes | None:
        """The bytes of one index (INDEX_KINDS), None when the segment has none."""
        raise NotImplementedError

    def index_name(self, kind: str) -> str:
        """How errors name an index of this segment."""
        raise NotImplementedError



class LocalTieredSegment(RemoteSegmentFiles):
    """A segment of Kafka's LocalTieredStorage: plain copies of the broker's files."""

    def open_log(self) -> Blob:
        from . import open_blob

        if self.log is None:
            raise _error(f"{self.directory}/{self.name}.log", "the segment's .log is missing")
        return open_blob(self.log)

    def index_bytes(self, kind: str) -> bytes | None:
        path = self.files.get(kind)
        if path is None:
            return None
        from . import map_file

        data, _size = map_file(path)
        return None if data is None else bytes(data)

    def index_name(self, kind: str) -> str:
        return str(self.files.get(kind) or f"{self.directory}/{self.name}.{INDEX_KINDS[kind][1]}")


class AivenSegment(RemoteSegmentFiles):
    """A segment as Aiven's RemoteStorageManager uploads it: its manifest read first (one
    small GET), then chunks of the .log and ranges of the `indexes` object as they are
    read."""

    def __init__(self, *args: Any, keys: KeyRing | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.keys = keys if keys is not None else KeyRing({})
        self._manifest: Manifest | None = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_manifest"] = None  # read again where it is unpickled (its key unwrapped there)
        return state

    @property
    def manifest_path(self) -> StoragePath:
        return self.directory / f"{self.name}.rsm-manifest"

    @property
    def manifest(self) -> Manifest:
        if self._manifest is None:
            path = self.manifest_path
            data = read_side_file(path, MANIFEST_LIMIT)
            if data is None:
                raise _error(str(path), "the segment's manifest is missing")
            self._manifest = Manifest.parse(data, str(path), self.keys)
        return self._manifest

    def open_log(self) -> Blob:
        if self.log is None:
            raise _error(f"{self.directory}/{self.name}.log", "the segment's .log is missing")
        m = self.manifest
        log = self.log
        url = str(log)
        stored = _size(log)
        if stored != m.chunks.transformed_size:
            raise _error(url, f"{stored} bytes, but its manifest's chunks add up to "
                              f"{m.chunks.transformed_size}: the manifest does not match its "
                              "segment")  # fmt: skip
        if m.chunks.count == 0 or (not m.compression and m.encryption is None):
            # no transform: the object is the segment byte for byte
            from . import open_blob

            return open_blob(log)
        return _ChunkedSource(log, m).blob()

    def index_bytes(self, kind: str) -> bytes | None:
        m = self.manifest
        if m.indexes is not None:  # one `indexes` object, each index a range of it
            span = m.indexes.get(kind)
            if span is None:
                return None
            pos, size = span
            path = self.directory / f"{self.name}.indexes"
            raw = _read_range(path, pos, pos + size)
            where = f"index {kind} (bytes {pos}-{pos + size - 1})"
            return m.encryption.decrypt(raw, str(path), where) if m.encryption and size else raw
        own = self.files.get(kind)  # older plugins: an object per index
        if own is None:
            return None
        path = own
        data = read_side_file(path, 1 << 31)
        if data is None:
            return None
        if m.encryption is not None and data:
            try:
                return m.encryption.decrypt(data, str(path), f"index {kind}")
            except StorageError:
                # The earliest plugins wrote indexes raw beside encrypted logs; the data key
                # is known good (it unwrapped, with OAEP's own check), so a tag that does not
                # match says this index was written raw.
                return data
        return data

    def index_name(self, kind: str) -> str:
        m = self._manifest
        if m is not None and m.indexes is not None:
            return f"{self.directory}/{self.name}.indexes#{kind}"
        return str(self.files.get(kind) or f"{self.directory}/{self.name}.{INDEX_KINDS[kind][0]}")


def _read_range(path: StoragePath, start: int, end: int) -> bytes:
    """Bytes [start, end) of a file of the layout (one ranged GET from an object store)."""
    if not path.exists():
        raise _error(str(path), "the segment's object is missing")
    size = _size(path)
    if end > size:
        raise _error(str(path), f"{size} bytes, but the manifest places bytes {start}-{end - 1} "
                                "in it: the manifest does not match its segment")  # fmt: skip
    return bytes(_Range(path).read(start, end)) if end > start else b""


def _size(path: StoragePath) -> int:
    from . import size_of

    return path.size if is_remote(path) else size_of(path)  # type: ignore[union-attr]


class _Range:
    """Ranged reads of one file: an object's GETs, or a local file's preads (never through
    a link: fsio's rules)."""

    def __init__(self, path: StoragePath):
        self.path = path
        if is_remote(path):
            from . import _Object

            self._obj: Any = _Object(path)  # type: ignore[arg-type]

    def read(self, start: int, end: int) -> bytes:
        if is_remote(self.path):
            return self._obj.read(start, end)
        from . import fsio

        return b"".join(fsio.copy_range(self.path, start, end))  # LogError if it ends before


class _ChunkedSource:
    """The .log of a transformed segment: ranges of original bytes from whole chunks."""

    def __init__(self, log: StoragePath, manifest: Manifest):
        self.log = log
        self.url = str(log)
        self.m = manifest
        self.obj = _Range(log)
        self.bounds = manifest.chunks.original_bounds()
        self.tstarts = manifest.chunks.transformed_starts()

    def blob(self) -> SpooledBlob:
        spool = self.log.store.spool_dir if is_remote(self.log) else None  # type: ignore[union-attr]
        return SpooledBlob(self.url, self.m.chunks.original_file_size, self.fetch,
                           units=lambda a, b: covering(self.bounds, a, b), spool_dir=spool)  # fmt: skip

    def fetch(self, start: int, end: int) -> bytes:
        import bisect

        first = bisect.bisect_right(self.bounds, start) - 1
        last = bisect.bisect_left(self.bounds, end) - 1
        raw = self.obj.read(self.tstarts[first], self.tstarts[last + 1])
        out = bytearray()
        base = self.tstarts[first]
        for i in range(first, last + 1):
            chunk = raw[self.tstarts[i] - base : self.tstarts[i + 1] - base]
            out += self._original(i, bytes(chunk))
        return bytes(out)

    def _original(self, i: int, chunk: bytes) -> bytes:
        where = f"chunk {i} (stored bytes {self.tstarts[i]}-{self.tstarts[i + 1] - 1})"
        want = self.bounds[i + 1] - self.bounds[i]
        if self.m.encryption is not None:
            chunk = self.m.encryption.decrypt(chunk, self.url, where)
        if self.m.compression:
            import zstandard

            try:
                chunk = zstandard.ZstdDecompressor().decompressobj().decompress(chunk)
            except zstandard.ZstdError as err:
                raise _error(self.url, f"{where}: does not decompress (zstd): {err}") from None
        if len(chunk) != want:
            raise _error(self.url, f"{where}: {len(chunk)} bytes once transformed back, but the "
                                   f"manifest says {want}: the manifest does not match its segment")  # fmt: skip
        return chunk


# --------------------------------------------------------------------- finding them


def _grouped(path: StoragePath, pattern: re.Pattern) -> dict[tuple[int, str], dict[str, StoragePath]]:
    groups: dict[tuple[int, str], dict[str, StoragePath]] = {}
    for child in path.iterdir():
        m = pattern.match(child.name)
        if m:
            groups.setdefault((int(m[1]), m[2]), {})[m[3]] = child
    return groups


@dataclass(frozen=True)
class TieredRoot:
    """Where a RemoteStorageManager keeps its segments: a directory (a bucket's prefix, a
    filesystem folder), and the rest of Aiven's key prefix (`rsm.config.key.prefix`) when it
    does not end with "/": the plugin's keys are the prefix followed by
    `<topic>-<topicId>/<partition>/...` (ObjectKeyFactory), so the prefix `kafka-` puts a
    topic's objects in `kafka-orders-<topicId>/` and its text belongs to the folder names."""

    directory: StoragePath
    prefix: str = ""

    def __str__(self) -> str:
        return f"{self.directory}/{self.prefix}" if self.prefix else str(self.directory)

    def entries(self) -> list[tuple[str, StoragePath]]:
        """(name without the prefix, path) of the folders the root holds, LocalTieredStorage's
        kafka-tiered-storage folder looked into (it has no prefix)."""
        base = self.directory
        if not self.prefix and (base / LOCAL_ROOT).is_dir():
            base = base / LOCAL_ROOT
        return [(c.name[len(self.prefix) :], c) for c in base.iterdir()
                if c.name.startswith(self.prefix) and len(c.name) > len(self.prefix)]  # fmt: skip


def tiered_root(path: StoragePath) -> TieredRoot | None:
    """The root a path names: a directory; or, when no directory has that name, its parent
    and the last part as Aiven's key prefix (`remote/kafka-`, `s3://bucket/kafka-`), when
    some folder in the parent starts with it. None when it names neither."""
    if path.is_dir():
        return TieredRoot(path)
    parent, prefix = path.parent, path.name
    if prefix and parent != path and parent.is_dir():
        if any(c.name.startswith(prefix) and c.is_dir() for c in parent.iterdir()):
            return TieredRoot(parent, prefix)
    return None


def remote_partition_dir(root: TieredRoot | StoragePath, topic: str, partition: int,
                         topic_id: str | None) -> list[tuple[str, StoragePath]]:  # fmt: skip
    """The directories of one partition under a tiered-storage root, as (layout, path):
    Aiven's <root><prefix><topic>-<topicId>/<partition>, LocalTieredStorage's
    <root>[/kafka-tiered-storage]/<topic>-<partition>-<topicId>. Without a topic id every
    topic folder of that name matches (the caller tells them apart, or refuses)."""
    if not isinstance(root, TieredRoot):
        root = TieredRoot(root)
    out: list[tuple[str, StoragePath]] = []
    for name, c in root.entries():
        m = LOCAL_PARTITION_DIR.match(name)
        if m and not root.prefix and m["topic"] == topic and int(m["partition"]) == partition \
                and topic_id in (None, m["id"]):  # fmt: skip
            out.append(("local-tiered", c))
        m = AIVEN_TOPIC_DIR.match(name)
        if m and m["topic"] == topic and topic_id in (None, m["id"]):
            out.append(("aiven", c / str(partition)))
    return out


#: The files a segment of each layout must have (the transaction index is optional in both:
#: RemoteLogSegmentFileset's optional types; the plugin uploads one only when there is one).
REQUIRED = {
    "aiven": ({"log", "rsm-manifest", "indexes"},
              {"log", "rsm-manifest", "index", "timeindex", "snapshot", "leader-epoch-checkpoint"}),
    "local-tiered": ({"log", "index", "timeindex", "snapshot", "leader_epoch_checkpoint"},),
}  # fmt: skip


def segment_files(layout: str, path: StoragePath) -> dict[tuple[int, str], set[str]]:
    """The segments a layout's partition directory holds files of: (start offset, segment
    id) -> the suffixes there."""
    pattern = _AIVEN_FILE if layout == "aiven" else _LOCAL_FILE
    if not path.is_dir():
        return {}
    return {k: set(v) for k, v in _grouped(path, pattern).items()}


def missing_files(layout: str, suffixes: set[str]) -> set[str]:
    """What a segment's files lack, by the layout's rules (the smallest lack of any form)."""
    return min((need - suffixes for need in REQUIRED[layout]), key=len)


def is_aiven_partition(path: StoragePath) -> bool:
    """Whether a directory is an Aiven partition's (<topic>-<topicId>/<partition>) holding
    its segment files (<20-digit offset>-<id>.rsm-manifest, .log, .indexes, ...)."""
    return path.name.isdigit() and any(_AIVEN_FILE.match(c.name) for c in path.iterdir())


def is_local_tiered_partition(path: StoragePath) -> bool:
    """Whether a directory is one of LocalTieredStorage's (<topic>-<partition>-<topicId>,
    holding <offset>-<segmentId>.log files)."""
    return bool(LOCAL_PARTITION_DIR.match(path.name)) and any(
        _LOCAL_FILE.match(c.name) for c in path.iterdir()
    )


_AIVEN_SUFFIX_KIND = {suffix: kind for kind, (suffix, _l) in INDEX_KINDS.items()}
_LOCAL_SUFFIX_KIND = {suffix: kind for kind, (_a, suffix) in INDEX_KINDS.items()}


def aiven_segments(path: StoragePath, keys: KeyRing | None = None) -> tuple[list[AivenSegment], list[str]]:
    """The segments of an Aiven partition directory (<prefix><topic>-<topicId>/<partition>),
    in offset order, and what is wrong with the listing (files without a manifest)."""
    out, problems = [], []
    for (offset, sid), files in sorted(_grouped(path, _AIVEN_FILE).items()):
        if "rsm-manifest" not in files:
            problems.append(f"{path}/{offset:020d}-{sid}: {', '.join(sorted(files))} without a "
                            ".rsm-manifest (an upload that did not finish?): not read")  # fmt: skip
            continue
        kinds = {_AIVEN_SUFFIX_KIND[s]: p for s, p in files.items() if s in _AIVEN_SUFFIX_KIND}
        out.append(AivenSegment(path, offset, sid, files.get("log"), kinds, "aiven", keys=keys))
    return out, problems


def aiven_segment_of(log: StoragePath, keys: KeyRing | None = None) -> AivenSegment | None:
    """The Aiven segment whose .log object this is (named <20-digit offset>-<id>.log, with
    its .rsm-manifest beside it), else None."""
    m = _AIVEN_FILE.match(log.name)
    if m is None or m[3] != "log":
        return None
    directory = log.parent
    segment = AivenSegment(directory, int(m[1]), m[2], log, {}, "aiven", keys=keys)
    return segment if segment.manifest_path.exists() else None


def local_tiered_segments(path: StoragePath) -> tuple[list[LocalTieredSegment], list[str]]:
    """The segments of a LocalTieredStorage partition directory, in offset order."""
    out, problems = [], []
    for (offset, sid), files in sorted(_grouped(path, _LOCAL_FILE).items()):
        if "log" not in files:
            problems.append(f"{path}/{offset}-{sid}: {', '.join(sorted(files))} without a .log: not read")
            continue
        kinds = {_LOCAL_SUFFIX_KIND[s]: p for s, p in files.items() if s in _LOCAL_SUFFIX_KIND}
        out.append(LocalTieredSegment(path, offset, sid, files["log"], kinds, "local-tiered"))
    return out, problems


