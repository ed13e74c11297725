"""kuota's own Prometheus metrics of the scheduler (``kuota_`` prefix; docs/metrics.md).

Kueue's series are :mod:`scheduler.kube.kueue_metrics`' (recorded) and
:mod:`scheduler.metrics` (defined and computed).  Both live on
prometheus-client's default registry, which the scheduler serves on its
metrics endpoint.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

CYCLE_SECONDS = Histogram(
    "kuota_cycle_duration_seconds",
    "Duration of one engine cycle.",
    buckets=(0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5),
)
DECISIONS = Counter("kuota_decisions_total", "Engine decisions carried out.", ["decision"])
WRITE_SECONDS = Histogram(
    "kuota_api_write_duration_seconds",
    "Latency of the scheduler's API writes.",
    ["verb", "resource"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
EVENTS_DROPPED = Counter(
    "kuota_events_dropped_total",
    "Events not written: the queue was full, or the API server refused the write.",
    ["reason"],
)
WRITES_FENCED = Counter(
    "kuota_api_writes_fenced_total",
    "Writes refused before sending: this replica may no longer hold the Lease.",
    ["verb", "resource"],
)
LAST_WRITE_SENT = Gauge(
    "kuota_api_last_write_sent_timestamp_seconds",
    "Unix time at which this replica last sent an API write (passed the fence).",
)
LEADING = Gauge("kuota_leading", "1 while this replica leads (holds the Lease and acts), else 0.")
