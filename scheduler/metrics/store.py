"""The counters, histograms and remembered gauges of Kueue's series, by label values.

prometheus-client's own metric objects can delete one series by its full
label values, not "every series of this ClusterQueue"; Kueue deletes a
queue's series when the queue goes (docs/metrics.md#series-of-deleted-queues),
and a family without series must not print at all (Kueue's suites look for
its name).  So kuota keeps the values here, as plain numbers keyed by label
values in the catalogue's order, and :mod:`scheduler.metrics.exposition`
turns them into families at scrape time.

Recording names its labels in a mapping; a label the catalogue does not list,
or one missing, is a programming error (``ValueError``), found by the tests
rather than by a dashboard that silently shows nothing.  The ``custom_*``
labels of ``metrics.customLabels`` (docs/metrics.md#custom-labels) follow the
catalogue's on the series that take them: :meth:`SeriesStore.labels_of`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from scheduler.api.custom_labels import CustomLabels
from scheduler.metrics.catalog import BY_NAME, Series

LabelValues = tuple[str, ...]


@dataclass
class HistogramValue:
    """One histogram series: observations per bucket (not cumulative), their sum and count."""

    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    count: int = 0

    def observe(self, value: float) -> None:
        if not self.counts:
            self.counts = [0] * len(self.bounds)
        index = bisect.bisect_left(self.bounds, value)
        if index < len(self.bounds):
            self.counts[index] += 1
        self.total += value
        self.count += 1

    def cumulative(self) -> list[tuple[str, float]]:
        """``(le, cumulative count)`` pairs ending with ``+Inf``, as Prometheus has them: pure."""
        buckets, running = [], 0
        counts = self.counts or [0] * len(self.bounds)
        for bound, count in zip(self.bounds, counts, strict=True):
            running += count
            buckets.append((_le(bound), float(running)))
        buckets.append(("+Inf", float(self.count)))
        return buckets


def _le(bound: float) -> str:
    """A bucket bound as client_golang writes it (``1``, ``2.5``, ``0.005``): pure."""
    if math.isfinite(bound) and bound == int(bound):
        return str(int(bound))
    return repr(float(bound))


Value = float | HistogramValue


class SeriesStore:
    """Values of the recorded series (counters, histograms, remembered gauges), by name."""

    def __init__(self) -> None:
        self._values: dict[str, dict[LabelValues, Value]] = {}
        self._custom = CustomLabels()

    @property
    def custom_labels(self) -> CustomLabels:
        """The ``metrics.customLabels`` in effect."""
        return self._custom

    @custom_labels.setter
    def custom_labels(self, custom: CustomLabels) -> None:
        """Other custom labels: the series recorded with the old ones are dropped."""
        if custom != self._custom:
            self._values.clear()
        self._custom = custom

    def labels_of(self, series: Series) -> tuple[str, ...]:
        """The label names of ``series``: the catalogue's, then its custom ones: pure."""
        return series.labels + self._custom.names(series.custom)

    def inc(self, name: str, labels: Mapping[str, str], amount: float = 1.0) -> None:
        """Add ``amount`` to a counter series."""
        series, key = self._key(name, labels, "counter")
        family = self._values.setdefault(series.name, {})
        current = family.get(key, 0.0)
        assert isinstance(current, float)
        family[key] = current + amount

    def observe(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Add one observation to a histogram series."""
        series, key = self._key(name, labels, "histogram")
        family = self._values.setdefault(series.name, {})
        current = family.get(key)
        if current is None:
            current = family[key] = HistogramValue(series.buckets)
        assert isinstance(current, HistogramValue)
        current.observe(value)

    def set_gauge(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Set a gauge whose value is remembered rather than read out of the state."""
        series, key = self._key(name, labels, "gauge")
        self._values.setdefault(series.name, {})[key] = float(value)

    def samples(self, name: str) -> Iterator[tuple[LabelValues, Value]]:
        """The series of ``name`` recorded so far, in recording order."""
        yield from list(self._values.get(name, {}).items())

    def value(self, name: str, labels: Mapping[str, str]) -> Value | None:
        """One series' value (None: never recorded, or forgotten): pure."""
        key = tuple(labels.get(label, "") for label in self.labels_of(BY_NAME[name]))
        return self._values.get(name, {}).get(key)

    def forget(self, names: tuple[str, ...], match: Mapping[str, str]) -> int:
        """Drop every series of ``names`` whose labels include all of ``match``; how many."""
        dropped = 0
        for name in names:
            series = BY_NAME[name]
            positions = [(series.labels.index(label), value) for label, value in match.items()]
            family = self._values.get(name, {})
            for key in [k for k in family if all(k[i] == v for i, v in positions)]:
                del family[key]
                dropped += 1
        return dropped

    def label_values(self, name: str, label: str) -> set[str]:
        """Every value ``label`` takes among the series of ``name``: pure."""
        return {values[0] for values in self.label_tuples(name, label)}

    def label_tuples(self, name: str, *labels: str) -> set[tuple[str, ...]]:
        """Every combination of ``labels`` among the series of ``name``: pure."""
        positions = [BY_NAME[name].labels.index(label) for label in labels]
        return {tuple(key[i] for i in positions) for key in self._values.get(name, {})}

    def _key(self, name: str, labels: Mapping[str, str], kind: str) -> tuple[Series, LabelValues]:
        series = BY_NAME[name]
        if series.kind != kind:
            raise ValueError(f"{name} is a {series.kind}, not a {kind}")
        names = self.labels_of(series)
        if set(labels) != set(names):
            raise ValueError(f"{name} takes the labels {', '.join(names)}; got {', '.join(labels)}")
        return series, tuple(labels[label] for label in names)


__all__ = ["HistogramValue", "LabelValues", "SeriesStore", "Value"]
