"""The core never reads a clock: ``now`` is always an argument.

See docs/architecture.md#layers-and-imports.

The import contract in pyproject.toml keeps ``time`` out of ``scheduler.core``;
this test reads the source for the other ways to the wall clock: calls such
as ``datetime.now()``, ``datetime.utcnow()`` or ``date.today()`` and any
attribute of a name ``time``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import scheduler.core

CORE = Path(scheduler.core.__file__).parent
CLOCK_CALLS = {"now", "utcnow", "today"}


def clock_reads(source: str) -> list[str]:
    """``line: expression`` for every wall-clock read in ``source``: pure."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CLOCK_CALLS
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "time"
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module == "time":
            found.append(f"{node.lineno}: from time import ...")
    return found


def test_the_detector_sees_every_way_to_the_clock() -> None:
    source = (
        "import time\nfrom datetime import datetime, date\nfrom time import monotonic\n"
        "a = datetime.now(UTC)\nb = datetime.utcnow()\nc = date.today()\nd = time.time()\n"
        "e = record.timestamp\nf = now\n"
    )
    assert clock_reads(source) == [
        "3: from time import ...",
        "4: datetime.now(UTC)",
        "5: datetime.utcnow()",
        "6: date.today()",
        "7: time.time",
    ]


def test_no_module_of_the_core_reads_the_wall_clock() -> None:
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) > 20, modules  # the whole package, not an empty glob
    offenders = {
        str(path.relative_to(CORE)): reads
        for path in modules
        if (reads := clock_reads(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}
