"""Writers of the two tiered-storage layouts, for the tests: what Aiven's
RemoteStorageManager uploads for a segment (copyLogSegmentData: the .log cut into chunks,
each zstd-compressed and/or AES-256-GCM-encrypted; the indexes, each encrypted, in one
`indexes` object; the JSON manifest, SegmentManifestV1 with its chunk index), and what
Kafka's LocalTieredStorage copies. Written from the plugin's rules (facts read in its
source), independently of kafkacodec's reader: the tests read these objects back and
compare what they find with the segments they were made from."""

from __future__ import annotations

import base64
import importlib
import json
import os
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import zstandard
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def uuid() -> str:
    """A Kafka Uuid as Uuid.toString() writes it (URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()


def rsa_key(tmp: Path, name: str = "key") -> tuple[Path, Path]:
    """An RSA key pair made by OpenSSL, as the plugin's docs make them: the private key as
    a PKCS#8 PEM file (encryption.key.pair.<id>.private.key.file), and the public one."""
    private, public = tmp / f"{name}.pem", tmp / f"{name}.pub.pem"
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                    "-out", str(private)], check=True, capture_output=True)  # fmt: skip
    subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)],
                   check=True, capture_output=True)  # fmt: skip
    return private, public


def chunk_sizes(values: list[int]) -> bytes:
    """ChunkSizesBinaryCodec.encode."""
    if not values:
        return struct.pack(">i", 0)
    if len(values) == 1:
        return struct.pack(">ii", 1, values[0])
    head = values[:-1]
    base = min(head)
    per = max(1 if v - base <= 0xFF else 2 if v - base <= 0xFFFF else 3 if v - base <= 0xFFFFFF else 4
              for v in head)  # fmt: skip
    body = b"".join((v - base).to_bytes(4, "big")[4 - per :] for v in head)
    return struct.pack(">iiB", len(values), base, per) + body + struct.pack(">i", values[-1])


class Encryptor:
    """A segment's AES-256 data key and AAD (AesEncryptionProvider.createDataKeyAndAAD),
    wrapped for the manifest with an RSA public key as BouncyCastle's
    RSA/NONE/OAEPWithSHA3-512AndMGF1Padding does (SHA3-512 for OAEP and for MGF1), by
    OpenSSL's command line: another implementation than the reader's."""

    def __init__(self, public_key: Path, key_id: str | None = "key1"):
        self.key, self.aad = os.urandom(32), os.urandom(32)
        wrapped = subprocess.run(
            ["openssl", "pkeyutl", "-encrypt", "-pubin", "-inkey", str(public_key),
             "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha3-512",
             "-pkeyopt", "rsa_mgf1_md:sha3-512"],
            input=self.key, check=True, capture_output=True,
        ).stdout  # fmt: skip
        text = base64.b64encode(wrapped).decode()
        self.data_key = text if key_id is None else f"{key_id}:{text}"  # None: early plugins

    def encrypt(self, chunk: bytes) -> bytes:
        iv = os.urandom(12)
        return iv + AESGCM(self.key).encrypt(iv, chunk, self.aad)  # IV, ciphertext, 16-byte tag

    def manifest(self) -> dict:
        return {"dataKey": self.data_key, "aad": base64.b64encode(self.aad).decode()}


def write_aiven(put: Callable[[str, bytes], None], prefix: str, topic: str, topic_id: str,
                partition: int, seg_dir: Path, base_offset: int, *, chunk_size: int = 64 << 10,
                compression: bool = False, encryption: Encryptor | None = None,
                legacy_indexes: bool = False, segment_id: str | None = None,
                epochs: dict[int, int] | None = None, end_offset: int = -1,
                max_timestamp: int = -1) -> str:  # fmt: skip
    """Upload one local segment (seg_dir/<base>.log and its indexes) as the plugin does;
    returns the key stem <prefix><topic>-<topicId>/<partition>/<offset>-<segmentId>."""
    sid = segment_id or uuid()
    stem = f"{prefix}{topic}-{topic_id}/{partition}/{base_offset:020d}-{sid}"
    name = f"{base_offset:020d}"
    log = (seg_dir / f"{name}.log").read_bytes()
    sizes, out = [], bytearray()
    for at in range(0, len(log), chunk_size):
        chunk = log[at : at + chunk_size]
        if compression:
            chunk = zstandard.ZstdCompressor(write_content_size=True).compress(chunk)
        if encryption is not None:
            chunk = encryption.encrypt(chunk)
        sizes.append(len(chunk))
        out += chunk
    put(f"{stem}.log", bytes(out))
    if compression:  # VariableSizeChunkIndex: the sizes, zstd-compressed, in base64
        packed = zstandard.ZstdCompressor(write_content_size=True).compress(chunk_sizes(sizes))
        index = {"type": "variable", "originalChunkSize": chunk_size, "originalFileSize": len(log),
                 "transformedChunks": base64.b64encode(packed).decode()}  # fmt: skip
    else:  # FixedSizeChunkIndex: every chunk the same size but the last
        index = {"type": "fixed", "originalChunkSize": chunk_size, "originalFileSize": len(log),
                 "transformedChunkSize": sizes[0] if sizes else 0,
                 "finalTransformedChunkSize": sizes[-1] if sizes else 0}  # fmt: skip
    files = {
        "offset": seg_dir / f"{name}.index", "timestamp": seg_dir / f"{name}.timeindex",
        "producerSnapshot": seg_dir / f"{name}.snapshot", "leaderEpoch": None,
        "transaction": seg_dir / f"{name}.txnindex",
    }  # fmt: skip
    epoch_text = "0\n" + f"{len(epochs or {})}\n" + "".join(f"{e} {o}\n" for e, o in sorted((epochs or {}).items()))
    contents = {}
    for kind, path in files.items():
        if kind == "leaderEpoch":
            contents[kind] = epoch_text.encode()
        elif path.exists():
            contents[kind] = path.read_bytes()
        elif kind != "transaction":
            contents[kind] = b""  # the plugin uploads even an empty one
    legacy_suffix = {"offset": "index", "timestamp": "timeindex", "producerSnapshot": "snapshot",
                     "leaderEpoch": "leader-epoch-checkpoint", "transaction": "txnindex"}  # fmt: skip
    segment_indexes: dict | None = {}
    blob = bytearray()
    for kind in ("offset", "timestamp", "producerSnapshot", "leaderEpoch", "transaction"):
        if kind not in contents:
            segment_indexes[kind] = None  # type: ignore[index]
            continue
        data = contents[kind]
        if encryption is not None:
            data = encryption.encrypt(data)
        if legacy_indexes:
            put(f"{stem}.{legacy_suffix[kind]}", data)
        else:
            segment_indexes[kind] = {"position": len(blob), "size": len(data)}  # type: ignore[index]
            blob += data
    if legacy_indexes:
        segment_indexes = None
    else:
        put(f"{stem}.indexes", bytes(blob))
    manifest = {"version": "1", "chunkIndex": index}
    if segment_indexes is not None:
        manifest["segmentIndexes"] = segment_indexes
    manifest["compression"] = compression
    if encryption is not None:
        manifest["encryption"] = encryption.manifest()
    manifest["remoteLogSegmentMetadata"] = {
        "remoteLogSegmentId": {"topicIdPartition": {"topicId": topic_id, "topicPartition": {
            "topic": topic, "partition": partition}}, "id": sid},
        "startOffset": base_offset, "endOffset": end_offset, "maxTimestampMs": max_timestamp, "brokerId": 1,
        "eventTimestampMs": 1700000000000,
        "segmentLeaderEpochs": {str(e): o for e, o in sorted((epochs or {}).items())},
    }  # fmt: skip
    put(f"{stem}.rsm-manifest", json.dumps(manifest, separators=(",", ":")).encode())
    return stem


def write_local_tiered(root: Path, topic: str, topic_id: str, partition: int, seg_dir: Path,
                       base_offset: int, *, padded: bool = True) -> Path:  # fmt: skip
    """LocalTieredStorage's fileset of one segment: copies named <offset>-<segmentId>.<type>
    under <root>/kafka-tiered-storage/<topic>-<partition>-<topicId>/."""
    d = root / "kafka-tiered-storage" / f"{topic}-{partition}-{topic_id}"
    d.mkdir(parents=True, exist_ok=True)
    name = f"{base_offset:020d}"
    stem = f"{name if padded else base_offset}-{uuid()}"
    for suffix, local in (("log", ".log"), ("index", ".index"), ("timeindex", ".timeindex"),
                          ("txnindex", ".txnindex"), ("snapshot", ".snapshot")):  # fmt: skip
        src = seg_dir / f"{name}{local}"
        if src.exists():
            (d / f"{stem}.{suffix}").write_bytes(src.read_bytes())
        elif suffix == "snapshot":
            (d / f"{stem}.{suffix}").write_bytes(b"")
    (d / f"{stem}.leader_epoch_checkpoint").write_text("0\n0\n")
    return d


def remote_log_metadata(topic: str, topic_id: str, partition: int,
                        segments: list[tuple[str, int, int, int, int, dict[int, int]]],
                        event_time: int) -> list[bytes]:  # fmt: skip
    """The __remote_log_metadata record values of finished copies, as Kafka's
    TopicBasedRemoteLogMetadataManager writes them (the key is null): for each segment
    (segment id, start offset, end offset, max timestamp, size in bytes, {leader epoch:
    start offset}), a RemoteLogSegmentMetadataRecord (COPY_SEGMENT_STARTED) then its
    RemoteLogSegmentMetadataUpdateRecord (COPY_SEGMENT_FINISHED), framed as
    RemoteLogMetadataSerde frames them (conftest.metadata_value)."""
    from conftest import metadata_value

    from kafkacodec.internal import DEFAULT

    def entries(spec: str):  # the nested structs' classes of a spec's generated module
        return importlib.import_module(DEFAULT.top(DEFAULT.schema_of(spec)).__module__)

    add, upd = entries("RemoteLogSegmentMetadataRecord"), entries("RemoteLogSegmentMetadataUpdateRecord")

    def segment_id(mod, sid: str):
        tp = mod.TopicIdPartitionEntry(version=0, name=topic, id=base64.urlsafe_b64decode(topic_id + "=="),
                                       partition=partition, tagged_fields=[])  # fmt: skip
        return mod.RemoteLogSegmentIdEntry(version=0, topic_id_partition=tp,
                                           id=base64.urlsafe_b64decode(sid + "=="), tagged_fields=[])  # fmt: skip

    out = []
    for sid, start, end, max_ts, size, epochs in segments:
        leaders = [add.SegmentLeaderEpochEntry(version=0, leader_epoch=e, offset=o, tagged_fields=[])
                   for e, o in sorted(epochs.items())]  # fmt: skip
        out.append(metadata_value("RemoteLogSegmentMetadataRecord", 0, remote_log_segment_id=segment_id(add, sid),
                                  start_offset=start, end_offset=end, broker_id=1, max_timestamp_ms=max_ts,
                                  event_timestamp_ms=event_time, segment_leader_epochs=leaders,
                                  segment_size_in_bytes=size, custom_metadata=None, remote_log_segment_state=0))
        out.append(metadata_value("RemoteLogSegmentMetadataUpdateRecord", 0, remote_log_segment_id=segment_id(upd, sid),
                                  broker_id=1, event_timestamp_ms=event_time + 1, custom_metadata=None,
                                  remote_log_segment_state=1))  # fmt: skip
    return out
