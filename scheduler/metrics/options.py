"""Which of Kueue's series are emitted (docs/metrics.md#which-series-are-emitted).

Kueue reads them from ``metrics`` (``enableClusterQueueResources``,
``localQueueMetrics.enable`` and ``.localQueueSelector``), from
``fairSharing`` and from feature gates; kuota reads the same fields, and the
gates through :func:`scheduler.api.feature_gates.enabled` (kuota's stance on
each).  ``metrics.customLabels`` add labels rather than series
(:mod:`scheduler.metrics.custom_values`); ``UnadmittedWorkloadsObservability``
is refused by the Configuration check, so its series are never emitted by a
running scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.api.config import Configuration
from scheduler.api.feature_gates import enabled
from scheduler.api.operational import endpoints
from scheduler.api.validation.formats import selector_matches
from scheduler.metrics.catalog import Needs, Series


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricOptions:
    local_queue_metrics: bool = True
    local_queue_selector: Mapping[str, Any] | None = None
    """Raw label selector of the LocalQueues with series (None: all of them)."""
    cluster_queue_resources: bool = False
    fair_sharing: bool = False
    cohort_info: bool = True
    unadmitted: bool = False
    creation_latency: bool = True

    @classmethod
    def from_configuration(cls, config: Configuration | None) -> MetricOptions:
        """The options a Configuration asks for (None: Kueue's defaults): pure."""
        if config is None:
            return cls()
        gates = config.feature_gates
        section = config.operational.get("metrics") or {}
        local = section.get("localQueueMetrics")
        wanted = True if not isinstance(local, Mapping) else local.get("enable") is True
        return cls(  # Kueue: the gate on and (no localQueueMetrics section or enable: true)
            local_queue_metrics=enabled(gates, "LocalQueueMetrics") and wanted,
            local_queue_selector=local.get("localQueueSelector") if local else None,
            cluster_queue_resources=endpoints(config).cluster_queue_resources,
            fair_sharing=config.fair_sharing is not None,
            cohort_info=enabled(gates, "MetricsForCohorts"),
            unadmitted=enabled(gates, "UnadmittedWorkloadsObservability"),
            creation_latency=enabled(gates, "MetricForWorkloadCreationLatency"),
        )

    def local_queue_selected(self, labels: Mapping[str, str]) -> bool:
        """Whether a LocalQueue with these labels has series: pure."""
        if not self.local_queue_metrics:
            return False
        return self.local_queue_selector is None or selector_matches(
            self.local_queue_selector, labels
        )

    def emits(self, series: Series) -> bool:
        """Whether ``series`` is emitted at all with these options: pure."""
        needs = series.needs
        if needs is Needs.MISSING_FEATURE:
            return False
        wanted = {
            Needs.LOCAL_QUEUE_METRICS: self.local_queue_metrics,
            Needs.CLUSTER_QUEUE_RESOURCES: self.cluster_queue_resources,
            Needs.RESOURCES_AND_FAIR_SHARING: self.cluster_queue_resources and self.fair_sharing,
            Needs.FAIR_SHARING: self.fair_sharing,
            Needs.METRICS_FOR_COHORTS: self.cohort_info,
            Needs.UNADMITTED_OBSERVABILITY: self.unadmitted,
            Needs.LQ_UNADMITTED_OBSERVABILITY: self.unadmitted and self.local_queue_metrics,
            Needs.CREATION_LATENCY: self.creation_latency,
        }
        return wanted.get(needs, True)


__all__ = ["MetricOptions"]
