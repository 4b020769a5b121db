"""Object stores, read through pyarrow.fs: S3 (and anything that speaks its API), Google
Cloud Storage, Azure Blob Storage / Data Lake (abfs), HDFS.

Why pyarrow.fs (rather than fsspec with s3fs, gcsfs and adlfs): it is already the columnar
extra's dependency; one C++ library covers every scheme above with one API; a ranged read
(`read_at`) is exactly one ranged GET; reads release the GIL, so ranges are fetched in
parallel threads; and it pulls in no asyncio stack (s3fs brings aiobotocore, botocore and
aiohttp). It is imported only when a URL is opened: a plain install reads local files.

An ObjectPath names a file or a "directory" (a key prefix) by its URL and offers the part of
pathlib.Path's reading API the log layer uses, so that the same code reads a log directory
on disk or in a bucket. Nothing here writes: no method creates, changes or deletes an
object, and the filesystems are made without bucket creation.

Configuration, for S3: the endpoint from the option endpoint_override, else AWS_ENDPOINT_URL_S3,
else AWS_ENDPOINT_URL (pyarrow's S3FileSystem constructor reads neither variable,
apache/arrow#49643, so it is passed here); the region from the option region, else
AWS_REGION, else AWS_DEFAULT_REGION; credentials from the options access_key and
secret_key (and session_token), else the AWS SDK's chain (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, the shared credentials file, an instance or container role). Any
other option is given to the scheme's pyarrow filesystem as it is (`--storage-option
key=value` on the command line, the storage.* options of the Spark data source), with
kafkacodec's own: retries (attempts of a read, default 5) and spool_dir (where a remote
file being read is kept, default the system's temporary directory).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..runtime.errors import StorageError

__all__ = [
    "SCHEMES", "ObjectPath", "ObjectStore", "Stats", "is_url", "object_path", "store_for",
    "total_stats", "parse_options",
]  # fmt: skip

#: The URL schemes read through pyarrow.fs ("gcs" is pyarrow's spelling of "gs").
SCHEMES = ("s3", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")
#: Options that are kafkacodec's, not the filesystem's (encryption_key[.ID]: tiered
#: storage's RSA keys, storage/tiered.py).
OWN_OPTIONS = ("retries", "spool_dir")
OWN_PREFIXES = ("encryption_key",)
DEFAULT_RETRIES = 5
#: The first wait before a retry, in seconds; it doubles with each attempt (with jitter).
BACKOFF = 0.2
#: S3FileSystem's options that are not strings.
_S3_TYPES: dict[str, type] = {
    "anonymous": bool, "background_writes": bool, "force_virtual_addressing": bool,
    "request_timeout": float, "connect_timeout": float, "load_frequency": int,
    "check_directory_existence_before_creation": bool, "tls_verify": bool,
}  # fmt: skip
#: What a failure's text says when retrying cannot help.
_PERMANENT = (
    "ACCESS_DENIED", "AccessDenied", "INVALID_ACCESS_KEY_ID", "SIGNATURE_DOES_NOT_MATCH",
    "NO_SUCH_BUCKET", "NoSuchBucket", "HTTP status 403", "HTTP status 404", "HTTP status 400",
    "HTTP status 416", "INVALID_RANGE", "Unauthorized", "Forbidden", "PERMISSION_DENIED",
)  # fmt: skip


def is_url(text: str) -> bool:
    """Whether text names an object store (a URL of one of SCHEMES)."""
    scheme, sep, _rest = str(text).partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


@dataclass
class Stats:
    """What a store fetched: requests made (GETs of a range or a whole object, HEADs,
    LISTs), bytes received, and reads retried."""

    requests: int = 0
    bytes: int = 0
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, nbytes: int = 0, requests: int = 1) -> None:
        """Count requests made and bytes fetched (thread-safe)."""
        with self._lock:
            self.requests += requests
            self.bytes += nbytes

    def describe(self) -> str | None:
        """What was fetched, as the commands say it (None: nothing was)."""
        if not self.requests:
            return None
        return (f"fetched {self.bytes} bytes in {self.requests} requests from object stores"
                + (f" ({self.retries} retried)" if self.retries else ""))  # fmt: skip


def parse_options(pairs) -> dict[str, str]:
    """`key=value` strings (the command line's --storage-option) as a dict."""
    out = {}
    for pair in pairs or ():
        key, sep, value = str(pair).partition("=")
        if not sep or not key.strip():
            raise StorageError(str(pair), "a storage option is key=value")
        out[key.strip()] = value
    return out


def _typed(value: Any, kind: type | None) -> Any:
    if not isinstance(value, str):
        return value
    low = value.strip().lower()
    if kind is bool or (kind is None and low in ("true", "false")):
        if low not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"expected true or false, got {value!r}")
        return low in ("true", "1", "yes")
    if kind in (int, float):
        return kind(value)
    return value


class ObjectStore:
    """One filesystem (a scheme, and for S3 and GCS a bucket, for Azure an account, for
    HDFS a name node) with the options it was made with, and what it fetched."""

    def __init__(self, scheme: str, authority: str, options: dict[str, Any]):
        self.scheme = scheme
        self.authority = authority
        #: The options as given (what a pickled path carries to another process).
        self.given = dict(options)
        self.options = dict(options)
        own = {k: self.options.pop(k) for k in list(self.options)
               if k in OWN_OPTIONS or k.startswith(OWN_PREFIXES)}  # fmt: skip
        try:
            self.retries = max(1, int(own.get("retries", DEFAULT_RETRIES)))
        except ValueError:
            raise StorageError(f"{scheme}://{authority}",
                               f"option retries: not a number: {own['retries']!r}") from None  # fmt: skip
        self.spool_dir = own.get("spool_dir") or None
        self.stats = Stats()
        self.fs = self._filesystem()
        #: Listings made, by directory key: {name: FileInfo}. A bucket read by a command is
        #: taken as it was when listed (files of a closed segment do not change).
        self._listed: dict[str, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"ObjectStore({self.scheme}://{self.authority})"

    # -- making the filesystem
    def _filesystem(self):
        try:
            from pyarrow import fs as pafs
        except ImportError:
            raise StorageError(f"{self.scheme}://{self.authority}",
                               "reading object stores needs pyarrow: pip install "
                               "'kafkacodec[remote]'") from None  # fmt: skip
        url = f"{self.scheme}://{self.authority}"
        try:
            if self.scheme == "s3":
                return self._s3(pafs)
            if not self.options:  # pyarrow reads the URL as it documents
                return pafs.FileSystem.from_uri(f"{url}/")[0]
            # the scheme's filesystem class, with the options given
            cls = {"gs": pafs.GcsFileSystem, "abfs": getattr(pafs, "AzureFileSystem", None),
                   "abfss": getattr(pafs, "AzureFileSystem", None),
                   "hdfs": pafs.HadoopFileSystem, "viewfs": pafs.HadoopFileSystem}[self.scheme]  # fmt: skip
            if cls is None:
                raise StorageError(url, "this pyarrow has no Azure filesystem")
            opts = {k: _typed(v, None) for k, v in self.options.items()}
            if cls is pafs.HadoopFileSystem:
                host, _, port = self.authority.partition(":")
                opts.setdefault("host", host or "default")
                opts.setdefault("port", int(port or 0))
            elif cls is not pafs.GcsFileSystem:
                opts.setdefault("account_name", self.authority.partition("@")[2].partition(".")[0])
            return cls(**opts)
        except StorageError:
            raise
        except (OSError, ValueError, TypeError, KeyError, ImportError) as err:
            raise StorageError(url, f"cannot open the {self.scheme} filesystem: {err}") from None

    def _s3(self, pafs):
        opts: dict[str, Any] = {}
        for key, value in self.options.items():
            try:
                opts[key] = _typed(value, _S3_TYPES.get(key, str if key in _S3_STRINGS else None))
            except ValueError as err:
                raise StorageError(f"s3://{self.authority}", f"option {key}: {err}") from None
        env = os.environ
        endpoint = (
            opts.get("endpoint_override")
            or env.get("AWS_ENDPOINT_URL_S3")
            or env.get("AWS_ENDPOINT_URL")
        )
        if endpoint:
            opts["endpoint_override"] = endpoint
        region = opts.get("region") or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        if region:
            opts["region"] = region
        try:
            return pafs.S3FileSystem(**opts)
        except TypeError as err:
            raise StorageError(f"s3://{self.authority}", f"unknown storage option: {err}") from None

    # -- names
    def url(self, key: str) -> str:
        """The URL of a key of this store's filesystem (S3 and GCS keys start with the
        bucket, Azure's with the container, HDFS's with a slash)."""
        if self.scheme in ("abfs", "abfss"):
            rest = key.partition("/")[2]
            return f"{self.scheme}://{self.authority}/{rest}".rstrip("/")
        if self.scheme in ("hdfs", "viewfs"):
            return f"{self.scheme}://{self.authority}{key}"
        return f"{self.scheme}://{key}"

    # -- reading
    def info(self, key: str):
        """The FileInfo of key: from a listing of its directory when one was made, else
        asked for (a HEAD)."""
        parent, _, name = key.rpartition("/")
        listed = self._listed.get(parent)
        if listed is not None:
            found = listed.get(name)
            if found is not None:
                return found
            from pyarrow import fs as pafs

            return pafs.FileInfo(key, pafs.FileType.NotFound)
        return self._call(key, lambda: self.fs.get_file_info(key), "read the information of")

    def list(self, key: str) -> list:
        """The files and directories right below key, as FileInfo (remembered)."""
        from pyarrow import fs as pafs

        def listing():
            return self.fs.get_file_info(pafs.FileSelector(key, recursive=False,
                                                            allow_not_found=True))  # fmt: skip

        infos = self._call(key, listing, "list")
        self._listed[key.rstrip("/")] = {i.base_name: i for i in infos}
        return infos

    def open(self, key: str):
        """pyarrow's random-access file of key (its size asked for once)."""
        return self._call(key, lambda: self.fs.open_input_file(key), "open")

    def read(self, handle, key: str, start: int, end: int) -> bytes:
        """Bytes [start, end) of an opened object: one ranged GET, retried with backoff when
        the failure may pass. A shorter answer than asked (an object cut or replaced while
        read) is an error, never returned."""

        def get():
            data = handle.read_at(end - start, start)
            if len(data) != end - start:
                raise _ShortRead(
                    f"the object ended after {len(data)} of the {end - start} "
                    "bytes asked for (cut or replaced while read?)"
                )
            return data

        data = self._call(key, get, "read", start, end)
        self.stats.count(len(data), 0)
        return data

    def _call(self, key: str, fn, verb: str, start: int | None = None, end: int | None = None):
        """fn() with retries: a failure that may pass (a connection reset or refused, a
        timeout, a 5xx, throttling) is retried after a backoff that doubles; one that
        cannot (missing, access denied) fails at once. Either way the error names the URL
        and the byte range."""
        url = self.url(key)
        for attempt in range(self.retries):
            self.stats.count(0, 1)
            try:
                return fn()
            except FileNotFoundError:
                raise StorageError(url, f"cannot {verb}: no such object", start, end) from None
            except PermissionError as err:
                raise StorageError(url, f"cannot {verb}: access denied ({_reason(err)})",
                                   start, end) from None  # fmt: skip
            except OSError as err:
                text = _reason(err)
                if any(p in text for p in _PERMANENT):
                    raise StorageError(url, f"cannot {verb}: {_kind(text)}{text}", start,
                                       end) from None  # fmt: skip
                if attempt + 1 == self.retries:
                    raise StorageError(url, f"cannot {verb} after {self.retries} attempts: {text}",
                                       start, end) from None  # fmt: skip
                self.stats.retries += 1
                time.sleep(BACKOFF * (2**attempt) * (0.5 + random.random()))  # noqa: S311
        raise AssertionError  # pragma: no cover


class _ShortRead(OSError):
    """A ranged read that returned fewer bytes than asked for."""


_S3_STRINGS = (
    "access_key", "secret_key", "session_token", "region", "scheme", "endpoint_override",
    "role_arn", "session_name", "external_id",
)  # fmt: skip


def _reason(err: BaseException) -> str:
    return " ".join(str(err).split())


def _kind(text: str) -> str:
    if "ACCESS_DENIED" in text or "AccessDenied" in text or "403" in text or "Forbidden" in text:
        return "access denied: "
    if "INVALID_ACCESS_KEY_ID" in text or "SIGNATURE_DOES_NOT_MATCH" in text:
        return "the credentials were refused: "
    if "NO_SUCH_BUCKET" in text or "NoSuchBucket" in text:
        return "no such bucket: "
    return ""


_STORES: dict[tuple, ObjectStore] = {}
_STORES_LOCK = threading.Lock()


def store_for(scheme: str, authority: str, options: dict | None = None) -> ObjectStore:
    """The one ObjectStore of a process for a scheme, authority and options (made once:
    connections and listings are shared by everything that reads there)."""
    scheme = "gs" if scheme == "gcs" else scheme
    opts = {str(k): v for k, v in (options or {}).items()}
    key = (scheme, authority, tuple(sorted((k, str(v)) for k, v in opts.items())))
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = ObjectStore(scheme, authority, opts)
        return store


def total_stats() -> Stats:
    """What every store of this process fetched, added up."""
    total = Stats()
    for store in list(_STORES.values()):
        total.requests += store.stats.requests
        total.bytes += store.stats.bytes
        total.retries += store.stats.retries
    return total


class ObjectPath:
    """A file or a directory (a key prefix) of an object store, named by its URL, with the
    part of pathlib.Path's reading API the log layer uses. It never writes.

    str() is the URL; pickling keeps the URL and the store's options, so that a path made
    on a Spark driver names the same object on every executor."""

    __slots__ = ("store", "key")

    def __init__(self, store: ObjectStore, key: str):
        self.store = store
        self.key = key.rstrip("/")

    # -- names
    def __str__(self) -> str:
        return self.store.url(self.key)

    def __repr__(self) -> str:
        return f"ObjectPath({str(self)!r})"

    def __fspath__(self) -> str:
        # A local file call on an object path is a bug: say so rather than open a local
        # file of the same name.
        raise StorageError(str(self), "an object store URL is not a local file")

    def __reduce__(self):
        return (_restore, (self.store.scheme, self.store.authority, self.store.given, self.key))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectPath) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __lt__(self, other: ObjectPath) -> bool:
        return str(self) < str(other)

    def __truediv__(self, name: str) -> ObjectPath:
        return ObjectPath(self.store, f"{self.key}/{str(name).strip('/')}")

    @property
    def name(self) -> str:
        """The last part of the key, as Path.name."""
        return self.key.rpartition("/")[2]

    @property
    def suffix(self) -> str:
        """The name's extension (".log"), as Path.suffix."""
        name = self.name
        i = name.rfind(".")
        return name[i:] if 0 < i < len(name) - 1 else ""

    @property
    def stem(self) -> str:
        """The name without its extension, as Path.stem."""
        suffix = self.suffix
        return self.name[: -len(suffix)] if suffix else self.name

    @property
    def parent(self) -> ObjectPath:
        """The key's parent "directory", as Path.parent."""
        head = self.key.rpartition("/")[0]
        return ObjectPath(self.store, head or self.key)

    def with_name(self, name: str) -> ObjectPath:
        """The path with another last part, as Path.with_name."""
        return self.parent / name

    def absolute(self) -> ObjectPath:
        """Itself: an object's URL is absolute (as Path.absolute and Path.resolve)."""
        return self

    resolve = absolute

    # -- what is there
    def info(self):
        """The store's file info of the key (pyarrow.fs.FileInfo)."""
        return self.store.info(self.key)

    def exists(self) -> bool:
        """Whether an object or a "directory" (a key prefix) is there."""
        from pyarrow import fs as pafs

        return self.info().type != pafs.FileType.NotFound

    def is_dir(self) -> bool:
        """Whether the key is a "directory" (a prefix of objects)."""
        from pyarrow import fs as pafs

        return self.info().type == pafs.FileType.Directory

    def is_file(self) -> bool:
        """Whether the key is an object."""
        from pyarrow import fs as pafs

        return self.info().type == pafs.FileType.File

    def is_symlink(self) -> bool:
        """False: object stores have no symbolic links."""
        return False

    @property
    def size(self) -> int:
        """The object's size (None-safe: 0 for a directory or a missing object)."""
        return self.info().size or 0

    def iterdir(self) -> Iterator[ObjectPath]:
        """The objects and "directories" directly under the key, as Path.iterdir."""
        for i in self.store.list(self.key):
            yield ObjectPath(self.store, i.path)


def _restore(scheme: str, authority: str, options: dict, key: str) -> ObjectPath:
    return ObjectPath(store_for(scheme, authority, options), key)


def object_path(url: str, options: dict | None = None) -> ObjectPath:
    """The ObjectPath a URL names (s3://bucket/prefix/..., gs://, abfs://container@account...,
    hdfs://namenode:port/path)."""
    parts = urlsplit(str(url))
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise StorageError(str(url), f"not an object store URL (schemes: {', '.join(SCHEMES)})")
    if not parts.netloc and scheme != "hdfs":
        raise StorageError(str(url), "names no bucket (or container, or account)")
    store = store_for(scheme, parts.netloc, options)
    path = parts.path.strip("/")
    if scheme in ("s3", "gs", "gcs"):
        key = f"{parts.netloc}/{path}" if path else parts.netloc
    elif scheme in ("abfs", "abfss"):
        container = parts.netloc.partition("@")[0]
        key = f"{container}/{path}" if path else container
    else:
        key = "/" + path
    return ObjectPath(store, key)
