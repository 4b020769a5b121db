"""A broker's meta.properties, which Kafka writes in each of its log.dirs (and a
controller's metadata.log.dir): which node the directory belongs to, in which cluster, and
the directory's own id. Read as Kafka reads it (MetaProperties.Builder over
java.util.Properties.load)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kafkacodec.log.partition import JAVA_LINE_END, java_int
from kafkacodec.runtime.errors import LogError
from kafkacodec.storage import StoragePath, read_side_file

__all__ = ["META_PROPERTIES", "MetaProperties", "read_meta_properties", "java_properties"]

META_PROPERTIES = "meta.properties"

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_BLANK = " \t\f"


def _unescape(text: str, path: StoragePath) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "\\" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        c = text[i + 1]
        if c == "u":
            digits = text[i + 2 : i + 6]
            if len(digits) != 4 or not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                raise LogError(path, f"malformed \\uxxxx escape {text[i:i + 6]!r}")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(c, c))
            i += 2
    return "".join(out)


def _logical_lines(text: str) -> list[str]:
    """java.util.Properties' logical lines: natural lines joined where one ends in an odd
    number of backslashes, each continuation's leading blanks dropped; comment (# or !)
    and blank lines left out."""
    lines, pending = [], None
    for natural in JAVA_LINE_END.split(text):
        stripped = natural.lstrip(_BLANK)
        if pending is None:
            if not stripped or stripped[0] in "#!":
                continue
            current = stripped
        else:
            current = pending + stripped
        slashes = len(current) - len(current.rstrip("\\"))
        if slashes % 2:
            pending = current[:-1]
            continue
        lines.append(current)
        pending = None
    if pending is not None:
        lines.append(pending)
    return lines


def java_properties(text: str, path: StoragePath) -> dict[str, str]:
    """The key-value pairs of a properties file as java.util.Properties.load reads it: the
    key ends at the first unescaped '=', ':' or blank; blanks, then one '=' or ':', then
    blanks separate it from the value; escapes as Java's; a later key wins."""
    props = {}
    for line in _logical_lines(text):
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=:" or c in _BLANK:
                break
            i += 1
        key = line[:i]
        j = i
        while j < n and line[j] in _BLANK:
            j += 1
        if j < n and line[j] in "=:":
            j += 1
            while j < n and line[j] in _BLANK:
                j += 1
        props[_unescape(key, path)] = _unescape(line[j:], path)
    return props


@dataclass(frozen=True)
class MetaProperties:
    """One log directory's identity (Kafka's MetaProperties): version 0 (a ZooKeeper
    broker's: broker.id) or 1 (KRaft's: node.id); the cluster id; the directory id (3.7+,
    JBOD in KRaft). node_id is None where version 0 names no broker.id."""

    path: str
    version: int
    node_id: int | None
    cluster_id: str | None
    directory_id: str | None


def read_meta_properties(log_dir: StoragePath) -> MetaProperties | None:
    """The meta.properties of a log directory; None when it has none; LogError (naming
    the file and what is wrong) where Kafka's MetaProperties.Builder would refuse it: a
    version other than 0 or 1, a node id that is not an integer, version 1 without
    node.id or cluster.id, a directory.id that is not a Uuid."""
    path = log_dir / META_PROPERTIES
    raw = read_side_file(path)
    if raw is None:
        return None
    props = java_properties(raw.decode("latin-1"), path)  # Properties.load(InputStream)
    version_text = props.get("version", "0")
    if version_text not in ("0", "1"):
        raise LogError(path, f"unknown meta.properties version {version_text!r} (Kafka knows 0 and 1)")
    version = int(version_text)
    key = "broker.id" if version == 0 else "node.id"
    node_id = None
    if key in props:
        try:
            node_id = java_int(props[key], 32)  # Integer.parseInt: no blank taken
        except ValueError:
            raise LogError(path, f"{key}={props[key]!r} is not a 32-bit integer") from None
    elif version == 1:
        raise LogError(path, "node.id was not found (version 1 requires it)")
    cluster_id = props.get("cluster.id")
    if version == 1 and cluster_id is None:
        raise LogError(path, "cluster.id was not found (version 1 requires it)")
    directory_id = props.get("directory.id")
    if directory_id is not None and not re.fullmatch(r"[A-Za-z0-9_-]{22}", directory_id):
        raise LogError(path, f"directory.id={directory_id!r} is not a Uuid (22 characters of base64url)")
    return MetaProperties(str(log_dir), version, node_id, cluster_id, directory_id)
