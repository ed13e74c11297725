"""A pod set's topology assignment: domains with pod counts, and their v1beta2 encoding (pure).

A topology assignment says how many pods of a pod set go to each domain of
the lowest topology level (docs/concepts.md, "Topology-aware scheduling").
v1beta1 wrote it as a list of ``{values, count}`` domains; v1beta2 compresses
the same list into ``slices``: per slice, ``domainCount``, one entry per level
(``universal`` when every domain has the same value, else ``individual`` with
the common ``prefix`` and ``suffix`` taken out of the ``roots``) and the pod
counts (``universal`` when all equal, else ``individual``).

:func:`encode` writes the encoding Kueue v0.19 writes, so an assignment made
by kuota compares equal to one Kueue would make: consecutive hostname-level
domains sharing a reusable ``-``-delimited hostname prefix form one slice
(the longest prefix shared by at least two domains; shorter ones when that
would need more than 1,000 slices), each slice is compacted on its own, and
when more than one slice results the single-slice encoding is kept instead if
its JSON is shorter.  :func:`decode` reads any valid encoding back, in order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
MAX_DOMAINS_PER_SLICE: Final = 100_000
"""The v1beta2 limit on ``roots`` and ``podCounts.individual`` items."""
MAX_SLICES: Final = 1_000
"""The v1beta2 limit on ``slices`` items."""


@dataclass(frozen=True, slots=True)
class DomainAssignment:
    """``count`` pods in the domain named by ``values`` (one per level, highest first)."""

    values: tuple[str, ...]
    count: int


@dataclass(frozen=True, slots=True)
class TopologyAssignment:
    """A pod set's assignment: the levels it names and its domains, in order."""

    levels: tuple[str, ...]
    domains: tuple[DomainAssignment, ...]

    def encoded(self) -> dict[str, Any]:
        """The v1beta2 ``topologyAssignment`` (:func:`encode`): pure."""
        return encode(self.levels, self.domains)

    @classmethod
    def decoded(cls, assignment: Mapping[str, Any]) -> TopologyAssignment:
        """Read a v1beta2 ``topologyAssignment``; ValueError when malformed: pure."""
        levels, domains = decode(assignment)
        return cls(levels=levels, domains=tuple(domains))


def _level_values(values: Sequence[str]) -> dict[str, Any]:
    """One level of a slice: ``universal``, or ``individual`` with prefix and suffix: pure.

    The prefix and suffix are the longest common ones; they never overlap
    (the suffix keeps its length, the prefix is cut), and a root may be empty.
    """
    prefix = suffix = values[0]
    shortest = longest = len(values[0])
    for value in values[1:]:
        shortest, longest = min(shortest, len(value)), max(longest, len(value))
        prefix = prefix[: len(value)]
        suffix = suffix[len(suffix) - min(len(suffix), len(value)) :]
        for index, char in enumerate(prefix):
            if value[index] != char:
                prefix = prefix[:index]
                break
        for index in range(len(suffix)):
            if value[len(value) - 1 - index] != suffix[len(suffix) - 1 - index]:
                suffix = suffix[len(suffix) - index :]
                break
    if len(prefix) == longest:
        return {"universal": prefix}
    if len(prefix) + len(suffix) > shortest:
        prefix = prefix[: shortest - len(suffix)]
    individual: dict[str, Any] = {}
    if prefix:
        individual["prefix"] = prefix
    if suffix:
        individual["suffix"] = suffix
    individual["roots"] = [value[len(prefix) : len(value) - len(suffix)] for value in values]
    return {"individual": individual}


def _slice(levels: Sequence[str], domains: Sequence[DomainAssignment]) -> dict[str, Any]:
    """One maximally compacted slice of ``domains``: pure."""
    counts = [domain.count for domain in domains]
    pod_counts: dict[str, Any] = (
        {"universal": counts[0]} if len(set(counts)) == 1 else {"individual": counts}
    )
    return {
        "domainCount": len(domains),
        "valuesPerLevel": [
            _level_values([domain.values[index] for domain in domains])
            for index in range(len(levels))
        ],
        "podCounts": pod_counts,
    }


def _chunks(domains: Sequence[DomainAssignment]) -> Iterator[Sequence[DomainAssignment]]:
    for start in range(0, len(domains), MAX_DOMAINS_PER_SLICE):
        yield domains[start : start + MAX_DOMAINS_PER_SLICE]


def _prefix_ends(hostname: str) -> list[int]:
    """Where each ``-``-delimited prefix of ``hostname`` ends (a trailing ``-`` excluded)."""
    return [end + 1 for end in range(len(hostname) - 1) if hostname[end] == "-"]


def _prefix_keys(hostnames: Sequence[str]) -> list[str] | None:
    """Per domain, the longest hostname prefix shared by two or more domains: pure.

    Prefixes are tried from the deepest down until the runs they make fit in
    :data:`MAX_SLICES` slices; None when no depth does.
    """
    ends = [_prefix_ends(name) for name in hostnames]
    seen: dict[str, int] = {}
    for name, name_ends in zip(hostnames, ends, strict=True):
        for end in name_ends:
            prefix = name[:end]
            seen[prefix] = min(2, seen.get(prefix, 0) + 1)
    deepest = max((len(name_ends) for name_ends in ends), default=0)
    for depth in range(deepest, 0, -1):
        keys = []
        for name, name_ends in zip(hostnames, ends, strict=True):
            key = ""
            for end in reversed(name_ends[:depth]):
                if seen[name[:end]] >= 2:
                    key = name[:end]
                    break
            keys.append(key)
        slices, start = 0, 0
        for index in range(1, len(keys)):
            if keys[index] != keys[start]:
                slices += -(-(index - start) // MAX_DOMAINS_PER_SLICE)
                start = index
        slices += -(-(len(keys) - start) // MAX_DOMAINS_PER_SLICE)
        if slices <= MAX_SLICES:
            return keys
    return None


def _runs(
    domains: Sequence[DomainAssignment], keys: Sequence[str] | None
) -> Iterator[Sequence[DomainAssignment]]:
    if not keys:
        yield domains
        return
    start = 0
    for index in range(1, len(domains)):
        if keys[index] != keys[start]:
            yield domains[start:index]
            start = index
    yield domains[start:]


def _json_size(assignment: Mapping[str, Any]) -> int:
    return len(json.dumps(assignment, separators=(",", ":")))


def encode(levels: Sequence[str], domains: Sequence[DomainAssignment]) -> dict[str, Any]:
    """The v1beta2 ``topologyAssignment`` of ``domains``, as Kueue encodes it: pure."""
    single: dict[str, Any] = {"levels": list(levels), "slices": []}
    if not domains:
        return single
    keys = None
    if len(domains) > 1 and levels and levels[-1] == HOSTNAME_LABEL:
        keys = _prefix_keys([domain.values[-1] for domain in domains])
    slices = [_slice(levels, chunk) for run in _runs(domains, keys) for chunk in _chunks(run)]
    by_prefix: dict[str, Any] = {"levels": list(levels), "slices": slices}
    if len(slices) <= 1 or len(domains) > MAX_DOMAINS_PER_SLICE:
        return by_prefix
    single["slices"] = [_slice(levels, domains)]
    return single if _json_size(single) < _json_size(by_prefix) else by_prefix


def decode(assignment: Mapping[str, Any]) -> tuple[tuple[str, ...], list[DomainAssignment]]:
    """The levels and the domains of a v1beta2 ``topologyAssignment``, in order: pure.

    Raises ValueError for a malformed encoding (the API server's schema
    refuses those; this reader does not trust input it did not check).
    """
    levels = tuple(str(level) for level in assignment.get("levels") or [])
    domains: list[DomainAssignment] = []
    for item in assignment.get("slices") or []:
        size = item.get("domainCount")
        if not isinstance(size, int) or size < 0:
            raise ValueError("slices[].domainCount must be a non-negative integer")
        columns: list[list[str]] = []
        for level in item.get("valuesPerLevel") or []:
            if level.get("universal") is not None:
                columns.append([str(level["universal"])] * size)
                continue
            individual = level.get("individual") or {}
            roots = individual.get("roots") or []
            if len(roots) != size:
                raise ValueError(
                    "slices[].valuesPerLevel[].individual.roots must have domainCount items"
                )
            prefix, suffix = individual.get("prefix") or "", individual.get("suffix") or ""
            columns.append([f"{prefix}{root}{suffix}" for root in roots])
        if len(columns) != len(levels):
            raise ValueError("slices[].valuesPerLevel must have one entry per level")
        counts_field = item.get("podCounts") or {}
        if counts_field.get("universal") is not None:
            counts = [int(counts_field["universal"])] * size
        else:
            counts = [int(count) for count in counts_field.get("individual") or []]
            if len(counts) != size:
                raise ValueError("slices[].podCounts.individual must have domainCount items")
        for position in range(size):
            values = tuple(column[position] for column in columns)
            domains.append(DomainAssignment(values, counts[position]))
    return levels, domains


def pod_count(assignment: Mapping[str, Any]) -> int:
    """How many pods the assignment places: pure."""
    return sum(domain.count for domain in decode(assignment)[1])


__all__ = ["DomainAssignment", "HOSTNAME_LABEL", "decode", "encode", "pod_count"]
