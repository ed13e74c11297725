"""Every ``docs/<page>.md#<heading>`` that code, tests and docs cite names a heading that exists.

Code comments cite docs/ headings instead of carrying explanations twice; a
renamed heading would leave them pointing nowhere.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"([a-z-]+\.md)#([a-z0-9-]*[a-z0-9])\b")
"""``page.md#anchor``; a citation wrapped across lines (``#workload-``) is not checked."""


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def anchors() -> dict[str, set[str]]:
    return {
        page.name: {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", page.read_text(), re.M)}
        for page in (ROOT / "docs").glob("*.md")
    }


def test_every_cited_heading_exists() -> None:
    known = anchors()
    sources = [
        path
        for folder in (
            "scheduler",
            "webhook",
            "certs",
            "tests",
            "e2e",
            "benchmarks",
            "docs",
            "charts",
        )
        for path in (ROOT / folder).rglob("*")
        if path.suffix in {".py", ".md", ".yaml", ".tpl"} and path.is_file()
    ]
    sources += [ROOT / "README.md", ROOT / "Makefile"]
    dangling = sorted(
        f"{path.relative_to(ROOT)}: {page}#{anchor}"
        for path in sources
        for page, anchor in CITATION.findall(path.read_text(errors="replace"))
        if page in known and anchor not in known[page]
    )
    assert dangling == []
