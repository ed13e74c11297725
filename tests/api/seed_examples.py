"""YAML manifests found in the prose seeds (``tests/reference/seeds/*.txt``).

The seeds are the product documents kuota was created from (``shared/seeds``
beside the repository); a copy lives in ``tests/reference/seeds`` so a clone alone can
run the suite, and ``tests/test_reference_copies.py`` fails when the copy drifts.

The seeds are documentation pages: YAML appears in ``` fences, as bare
blocks between paragraphs, sometimes several documents back to back with no
``---``.  A block starts at a column-0 ``apiVersion:`` line (a ``# comment``
line just before it is allowed) and continues while lines look like YAML:
``key: value`` with a key of no spaces, ``- item``, comments, blank lines, or
lines inside a ``|``/``>`` block scalar.  A new column-0 ``apiVersion:``
starts a new document.  Blocks that still fail to load are trimmed from the
end until they do.  Only mappings with ``apiVersion`` and ``kind`` are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SEEDS = Path(__file__).resolve().parents[1] / "reference" / "seeds"

_KEY_LINE = re.compile(r"^\s*(?:- )?(?:[A-Za-z0-9_.\"'/-]+|\"[^\"]*\"):(?:\s|$)")
_ITEM_LINE = re.compile(r"^\s*-(?:\s|$)")
_BLOCK_SCALAR = re.compile(r":\s*[|>][-+0-9]*\s*(?:#.*)?$")


@dataclass(frozen=True)
class SeedDocument:
    source: str
    line: int
    api_version: str
    kind: str
    raw: dict[str, Any]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blocks(lines: list[str]) -> list[tuple[int, list[str]]]:
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    start = 0
    scalar_indent: int | None = None
    for number, line in enumerate(lines):
        stripped = line.strip()
        if line.startswith("apiVersion:"):
            if current:
                blocks.append((start, current))
            current, start, scalar_indent = [line], number, None
            continue
        if current is None:
            continue
        if scalar_indent is not None and (not stripped or _indent(line) > scalar_indent):
            current.append(line)
            continue
        scalar_indent = None
        if stripped.startswith("```") or stripped == "---":
            blocks.append((start, current))
            current = None
            continue
        if (
            not stripped
            or stripped.startswith("#")
            or _KEY_LINE.match(line)
            or _ITEM_LINE.match(line)
        ):
            current.append(line)
            if _BLOCK_SCALAR.search(line):
                scalar_indent = _indent(line)
            continue
        if (
            line.startswith(" ")
            and current
            and current[-1].strip()
            and not current[-1].rstrip().endswith(":")
        ):
            # continuation of a folded flow scalar (e.g. a quoted message over two lines)
            if re.match(r"^\s+\S", line) and _indent(line) > _indent(current[-1]):
                current.append(line)
                continue
        blocks.append((start, current))
        current = None
    if current:
        blocks.append((start, current))
    return blocks


def _load(block: list[str]) -> Any:
    for end in range(len(block), 0, -1):
        try:
            loaded = yaml.safe_load("\n".join(block[:end]))
        except yaml.YAMLError:
            continue
        if isinstance(loaded, dict) and "kind" in loaded:
            return loaded
    return None


def documents(directory: Path = SEEDS) -> list[SeedDocument]:
    """Every manifest with apiVersion and kind found in the seed files, in file order."""
    found: list[SeedDocument] = []
    for path in sorted(directory.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for start, block in _blocks(lines):
            loaded = _load(block)
            if loaded is None:
                continue
            api_version, kind = loaded.get("apiVersion"), loaded.get("kind")
            if isinstance(api_version, str) and isinstance(kind, str):
                found.append(SeedDocument(path.name, start + 1, api_version, kind, loaded))
    return found


def v1beta2_documents(directory: Path = SEEDS) -> list[SeedDocument]:
    """The ``kueue.x-k8s.io/v1beta2`` and ``config.kueue.x-k8s.io/v1beta2`` manifests."""
    return [
        doc
        for doc in documents(directory)
        if doc.api_version in ("kueue.x-k8s.io/v1beta2", "config.kueue.x-k8s.io/v1beta2")
    ]
