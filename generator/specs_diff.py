"""What changed between two directories of Kafka's message specs, and what of it breaks a
reader generated from the older one (`kafkacodec specs diff OLD NEW`).

A reader generated from OLD decodes the versions OLD declares. A change breaks it when
data it may meet no longer decodes as it expects:
- a new version (NEW's validVersions holds versions OLD's does not): it cannot decode it;
- in a version both know: a field added, removed or retyped, a field's presence, nullability
  or tag changed, or the version's flexibility changed (all change the bytes).
It does not break it when: a tagged field is added (readers skip unknown tags), versions are
dropped, a field changes only in versions OLD does not know, a default or an `about`
changes, or the spec's framing convention is renamed (`data` with the record type as key
version, 4.0's `coordinator-key` with an apiKey: the bytes on disk are the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .specs import MessageSpec, SpecField, Versions

__all__ = ["Change", "SpecDiff", "SpecsDiff", "diff_specs", "FIELD_PROPERTIES"]

#: The properties of a field that the comparison reads (besides its presence).
FIELD_PROPERTIES = ("type", "versions", "nullable", "tagged", "tag", "default", "ignorable",
                    "map_key", "entity_type")  # fmt: skip
_SPEC_NAMES = {"versions": "versions", "nullable": "nullableVersions", "tagged": "taggedVersions",
               "map_key": "mapKey", "entity_type": "entityType"}  # fmt: skip


@dataclass
class Change:
    """One difference: what, and whether it breaks a reader generated from OLD (why)."""

    what: str
    breaking: bool = False
    why: str = ""

    def __str__(self) -> str:
        return f"{self.what}{'  BREAKING: ' + self.why if self.breaking else ''}"


@dataclass
class SpecDiff:
    """The differences of one spec present in both directories."""

    name: str
    changes: list[Change] = field(default_factory=list)
    fields_added: list[str] = field(default_factory=list)
    fields_removed: list[str] = field(default_factory=list)
    fields_changed: list[str] = field(default_factory=list)
    moved: tuple[str, str] | None = None  # (old folder, new folder)

    @property
    def breaking(self) -> bool:
        return any(c.breaking for c in self.changes)


@dataclass
class SpecsDiff:
    """The comparison of two directories of specs."""

    old: str
    new: str
    added: list[str]
    removed: list[str]
    changed: list[SpecDiff]
    unchanged: list[str]

    @property
    def breaking(self) -> list[tuple[str, Change]]:
        return [(d.name, c) for d in self.changed for c in d.changes if c.breaking]

    def lines(self) -> list[str]:
        out = [f"specs {self.old} -> {self.new}: {len(self.added)} added, {len(self.removed)} "
               f"removed, {len(self.changed)} changed, {len(self.unchanged)} unchanged; "
               f"{len(self.breaking)} change{'s break' if len(self.breaking) != 1 else ' breaks'} "
               f"a reader generated from {self.old}"]  # fmt: skip
        out += [f"added   {name}" for name in self.added]
        out += [f"removed {name}" for name in self.removed]
        for d in self.changed:
            out.append(f"changed {d.name}{'  (breaks older readers)' if d.breaking else ''}")
            out += [f"  {c}" for c in d.changes]
        return out

    def to_dict(self) -> dict:
        return {
            "old": self.old, "new": self.new, "added": self.added, "removed": self.removed,
            "unchanged": self.unchanged,
            "changed": [{"spec": d.name, "moved": list(d.moved) if d.moved else None,
                         "fields_added": d.fields_added, "fields_removed": d.fields_removed,
                         "fields_changed": d.fields_changed,
                         "changes": [{"what": c.what, "breaking": c.breaking, "why": c.why}
                                     for c in d.changes]} for d in self.changed],
        }  # fmt: skip


def _known(v: Versions, spec: MessageSpec) -> list[int]:
    """The versions of range v that spec declares."""
    return v.within(spec.valid)


def _spec_changes(o: MessageSpec, n: MessageSpec, d: SpecDiff) -> None:
    if o.type != n.type:
        d.changes.append(Change(f"type {o.type!r} -> {n.type!r}"))
    if o.api_key != n.api_key:
        d.changes.append(Change(f"apiKey {o.api_key} -> {n.api_key}"))
    if str(o.valid) != str(n.valid):
        new_versions = [v for v in n.versions if v not in o.valid]
        listed = ", ".join(map(str, new_versions))
        why = (f"version{'s' if len(new_versions) > 1 else ''} {listed} "
               f"{'are' if len(new_versions) > 1 else 'is'} new: a reader from the older specs "
               f"knows {o.valid} only")  # fmt: skip
        d.changes.append(Change(f"validVersions {o.valid} -> {n.valid}", bool(new_versions),
                                why if new_versions else ""))  # fmt: skip
    if str(o.flexible) != str(n.flexible):
        both = [v for v in o.versions if v in n.valid and (v in o.flexible) != (v in n.flexible)]
        d.changes.append(Change(
            f"flexibleVersions {o.flexible} -> {n.flexible}", bool(both),
            f"version {both[0]} changes between flexible and not" if both else ""))  # fmt: skip


def _bytes_in(f: SpecField, spec: MessageSpec, both: list[int]) -> list[int]:
    """The versions both sides know in which the field is in the bytes as a plain (not
    tagged) field: adding or removing it there changes what a reader from OLD meets."""
    return [v for v in _known(f.versions, spec) if v in both and v not in f.tagged]


def _field_changes(o: MessageSpec, n: MessageSpec, d: SpecDiff) -> None:
    old, new = dict(o.walk()), dict(n.walk())
    both = [v for v in o.versions if v in n.valid]  # versions a reader from OLD decodes in NEW
    for path, f in new.items():
        if path in old:
            continue
        d.fields_added.append(path)
        hit = _bytes_in(f, n, both)
        tag = f", tag {f.tag}" if f.tag is not None else ""
        d.changes.append(Change(f"field {path} added ({f.type}, versions {f.versions}{tag})",
                                bool(hit), f"it changes version {hit[0]}'s bytes" if hit else ""))  # fmt: skip
    for path, f in old.items():
        if path in new:
            continue
        d.fields_removed.append(path)
        hit = _bytes_in(f, o, both)
        d.changes.append(Change(f"field {path} removed", bool(hit),
                                f"version {hit[0]} no longer carries it" if hit else ""))  # fmt: skip
    for path, f in old.items():
        g = new.get(path)
        if g is None:
            continue
        props = [p for p in FIELD_PROPERTIES if str(getattr(f, p)) != str(getattr(g, p))]
        if props:
            d.fields_changed.append(path)
        for p in props:
            d.changes.append(_property_change(path, p, f, g, both))


def _present(f: SpecField, version: int) -> tuple:
    """How a version encodes a field: present, nullable, tagged (with which tag), its type."""
    here = version in f.versions
    return (
        here,
        here and version in f.nullable,
        here and version in f.tagged,
        f.tag if here and version in f.tagged else None,
        f.type if here else None,
    )


def _property_change(path: str, p: str, f: SpecField, g: SpecField, both: list[int]) -> Change:
    what = f"field {path} {_SPEC_NAMES.get(p, p)} {getattr(f, p)!s} -> {getattr(g, p)!s}"
    if p in ("default", "ignorable", "map_key", "entity_type"):
        return Change(what)
    hit = [v for v in both if _present(f, v) != _present(g, v)]
    return Change(what, bool(hit), f"version {hit[0]} encodes it differently" if hit else "")


def _renumbered(o: MessageSpec, n: MessageSpec) -> MessageSpec | None:
    """o as n numbers its versions, when n only moved the record type from the key's
    version to apiKey (Kafka 4.0's coordinator-key convention: a pre-4.0 key spec with the
    one version 3 became version 0 with apiKey 3; the int16 before the key on disk is the
    record type either way). None when that is not what happened."""
    if not (o.type == "data" and n.type == "coordinator-key" and n.api_key is not None
            and o.valid.lo == o.valid.hi == n.api_key and n.valid.lo == 0):  # fmt: skip
        return None
    shift = n.api_key

    def moved(v: Versions) -> Versions:
        if v.empty:
            return v
        return Versions(max(v.lo - shift, 0), None if v.hi is None else v.hi - shift)

    def fields(fs: list[SpecField]) -> list[SpecField]:
        return [replace(f, versions=moved(f.versions), nullable=moved(f.nullable),
                        tagged=moved(f.tagged), fields=fields(f.fields)) for f in fs]  # fmt: skip

    return replace(o, type=n.type, api_key=n.api_key, valid=moved(o.valid),
                   flexible=moved(o.flexible), fields=fields(o.fields),
                   common_structs={k: fields(v) for k, v in o.common_structs.items()})  # fmt: skip


def _compare(o: MessageSpec, n: MessageSpec) -> SpecDiff:
    d = SpecDiff(n.name)
    if o.folder != n.folder:
        d.moved = (o.folder, n.folder)
        d.changes.append(Change(f"moved {d.moved[0]} -> {d.moved[1]}"))
    _spec_changes(o, n, d)
    _field_changes(o, n, d)
    renumbered = _renumbered(o, n)
    if renumbered is not None and not _compare(renumbered, n).breaking:
        for c in d.changes:
            c.breaking, c.why = False, ""
        d.changes.append(Change(
            f"the record type {n.api_key} moved from the key's version to apiKey (Kafka 4.0's "
            "coordinator-key convention): the bytes on disk are the same"))  # fmt: skip
    return d


def diff_specs(old: dict[str, MessageSpec], new: dict[str, MessageSpec], *,
               old_label: str = "OLD", new_label: str = "NEW") -> SpecsDiff:  # fmt: skip
    """Compare two sets of specs (load_specs), by spec name."""
    changed, unchanged = [], []
    for name in sorted(set(old) & set(new)):
        d = _compare(old[name], new[name])
        if d.changes:
            changed.append(d)
        else:
            unchanged.append(name)
    return SpecsDiff(old_label, new_label, sorted(set(new) - set(old)),
                     sorted(set(old) - set(new)), changed, unchanged)  # fmt: skip
