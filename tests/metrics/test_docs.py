"""docs/metrics.md lists every series of the catalogue, with its type and labels."""

from __future__ import annotations

import re
from pathlib import Path

from scheduler.metrics.catalog import SERIES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_the_series_table_is_the_catalogue() -> None:
    rows = {}
    for line in DOCS.read_text().splitlines():
        found = re.match(r"^\| `([a-z_]+)` \| (counter|gauge|histogram) \| ([^|]*) \|", line)
        if found:
            rows[found[1]] = (found[2], tuple(re.findall(r"`([a-z_]+)`", found[3])))
    expected = {
        series.name: (
            series.kind,
            tuple(label for label in series.labels if label != "replica_role"),
        )
        for series in SERIES
    }
    assert rows == expected
