"""How the single-process benchmarks print their figures: one aligned "name  value" line each."""

from __future__ import annotations

from collections.abc import Sequence


def print_rows(rows: Sequence[tuple[str, str]]) -> None:
    """Print ``(name, value)`` rows with the values in one column."""
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
