"""Kueue's series as Prometheus families, at scrape time (docs/metrics.md).

:class:`KueueCollector` is a prometheus-client collector: each scrape it
asks its gauge source for the gauges of now (:mod:`.gauges`), adds what the
store recorded (counters, histograms, remembered gauges) and yields one
family per series of the catalogue that has at least one sample.  A family
without samples is not written at all (no ``# HELP`` either), as
client_golang does, so "the series is gone" reads the same as with Kueue.
Counters carry no ``_created`` samples, for the same reason.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from scheduler.metrics.catalog import SERIES, Series
from scheduler.metrics.options import MetricOptions
from scheduler.metrics.store import HistogramValue, LabelValues, SeriesStore

GaugeSource = Callable[[], Mapping[str, Sequence[tuple[LabelValues, float]]]]


def build_info(version: str, commit: str = "", build_date: str = "") -> LabelValues:
    """``kueue_build_info``'s labels for this process: pure apart from reading the runtime.

    ``go_version`` and ``compiler`` name the Python runtime that runs kuota.
    """
    machine = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return (
        version,
        commit,
        build_date,
        f"python{platform.python_version()}",
        sys.implementation.name,
        f"{sys.platform}/{machine}",
    )


class KueueCollector:
    """Yields Kueue's families from a gauge source and a store (module docstring)."""

    def __init__(
        self,
        store: SeriesStore,
        *,
        options: Callable[[], MetricOptions],
        gauges: GaugeSource | None = None,
        build: LabelValues | None = None,
        series: Sequence[Series] = SERIES,
    ) -> None:
        self.store = store
        self.options = options
        self.gauges = gauges
        self.build = build
        self.series = series

    def describe(self) -> list[Metric]:
        """Nothing up front: the families depend on the state (and registering must not scrape)."""
        return []

    def collect(self) -> Iterator[Metric]:
        options = self.options()
        live = self.gauges() if self.gauges is not None else {}
        for series in self.series:
            if not options.emits(series):
                continue
            if series.name == "kueue_build_info":
                if self.build is not None:
                    family = GaugeMetricFamily(
                        series.name, series.description, labels=series.labels
                    )
                    family.add_metric(list(self.build), 1.0)
                    yield family
                continue
            built = self._family(series, live.get(series.name, ()))
            if built is not None:
                yield built

    def _family(self, series: Series, live: Sequence[tuple[LabelValues, float]]) -> Metric | None:
        recorded = dict(self.store.samples(series.name))
        if not live and not recorded:
            return None
        labels = list(self.store.labels_of(series))
        if series.kind == "histogram":
            histogram = HistogramMetricFamily(series.name, series.description, labels=labels)
            for key, value in recorded.items():
                assert isinstance(value, HistogramValue)
                histogram.add_metric(list(key), value.cumulative(), value.total)
            return histogram
        if series.kind == "counter":
            counter = CounterMetricFamily(series.name, series.description, labels=labels)
            for key, number in recorded.items():
                assert isinstance(number, float)
                counter.add_metric(list(key), number)
            return counter
        gauge = GaugeMetricFamily(series.name, series.description, labels=labels)
        merged: dict[LabelValues, float] = {}
        for key, number in recorded.items():
            assert isinstance(number, float)
            merged[key] = number
        merged.update(dict(live))
        for key, number in merged.items():
            gauge.add_metric(list(key), number)
        return gauge


__all__ = ["GaugeSource", "KueueCollector", "build_info"]
