"""Reading manifests the way ``kubectl apply -f`` takes them.

Multi-document YAML from files or standard input (``-``); ``kind: List``
documents are expanded into their items; empty documents are skipped.  Every
document remembers its file and line so that messages can point at it.  A
file that cannot be read or parsed raises :class:`InputError` naming the file
and the line, which the commands turn into exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import yaml

# libyaml's parser is ~10x faster than the pure-Python one and reports the
# same marks; PyYAML's wheels ship it, the fallback keeps source installs working.
SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class InputError(Exception):
    """Unreadable input: a missing file, bad YAML, a document that is not an object."""


@dataclass(frozen=True)
class Document:
    source: str
    line: int
    raw: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def _read(path: str, stdin: TextIO) -> tuple[str, str]:
    if path == "-":
        return "<stdin>", stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return path, handle.read()
    except OSError as failure:
        raise InputError(f"{path}: cannot read: {failure.strerror or failure}") from failure
    except UnicodeDecodeError as failure:
        raise InputError(f"{path}: not UTF-8 text: {failure.reason}") from failure


def _documents(source: str, text: str) -> Iterator[Document]:
    loader = SafeLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            line = node.start_mark.line + 1
            data = loader.construct_document(node)
            yield from _objects(source, line, data)
    except yaml.MarkedYAMLError as failure:
        mark = failure.problem_mark or failure.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = failure.problem or failure.context or "invalid YAML"
        raise InputError(f"{where}: invalid YAML: {problem}") from failure
    except yaml.YAMLError as failure:
        raise InputError(f"{source}: invalid YAML: {failure}") from failure
    finally:
        loader.dispose()


def _objects(source: str, line: int, data: Any) -> Iterator[Document]:
    if data is None:
        return
    if not isinstance(data, dict):
        raise InputError(
            f"{source}:{line}: a document must be a Kubernetes object (a mapping), "
            f"not {type(data).__name__}"
        )
    if data.get("kind") == "List" and isinstance(data.get("items"), list):
        for item in data["items"]:
            yield from _objects(source, line, item)
        return
    yield Document(source=source, line=line, raw=data)


def load(paths: Sequence[str], stdin: TextIO | None = None) -> list[Document]:
    """Every object in ``paths``, in order; raises InputError on unreadable input."""
    documents: list[Document] = []
    for path in paths:
        source, text = _read(path, stdin or sys.stdin)
        documents.extend(_documents(source, text))
    return documents
