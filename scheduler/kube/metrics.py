"""The scheduler's Prometheus metrics, defined once (docs/architecture.md#metrics).

Metric names are Kueue's so existing dashboards keep working; kuota's own
carry the ``kuota_`` prefix.  Every Kueue metric has the ``replica_role``
label (``leader`` or ``follower``).  They live in the adapter layer because
the executor and the writer record them as they act; the service only
serves ``/metrics`` (prometheus-client's default registry).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

ROLE = ["replica_role"]
WAIT_BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 14400)

ADMISSION_ATTEMPTS = Counter(
    "kueue_admission_attempts_total", "Scheduling cycles by result.", ["result", *ROLE]
)
ADMISSION_ATTEMPT_SECONDS = Histogram(
    "kueue_admission_attempt_duration_seconds", "Duration of a scheduling cycle.", ["result", *ROLE]
)
PENDING = Gauge(
    "kueue_pending_workloads",
    "Pending workloads per ClusterQueue.",
    ["cluster_queue", "status", *ROLE],
)
RESERVING = Gauge(
    "kueue_reserving_active_workloads", "Workloads holding quota.", ["cluster_queue", *ROLE]
)
ADMITTED_ACTIVE = Gauge(
    "kueue_admitted_active_workloads", "Admitted, unfinished workloads.", ["cluster_queue", *ROLE]
)
QUOTA_RESERVED = Counter(
    "kueue_quota_reserved_workloads_total",
    "Quota reservations.",
    ["cluster_queue", "priority_class", *ROLE],
)
ADMITTED = Counter(
    "kueue_admitted_workloads_total", "Admissions.", ["cluster_queue", "priority_class", *ROLE]
)
ADMISSION_WAIT = Histogram(
    "kueue_admission_wait_time_seconds",
    "Time from creation to admission.",
    ["cluster_queue", "priority_class", *ROLE],
    buckets=WAIT_BUCKETS,
)
EVICTED = Counter(
    "kueue_evicted_workloads_total",
    "Evictions.",
    ["cluster_queue", "reason", "underlying_cause", "priority_class", *ROLE],
)
FINISHED = Counter(
    "kueue_finished_workloads_total",
    "Finished workloads.",
    ["cluster_queue", "priority_class", *ROLE],
)
CQ_STATUS = Gauge(
    "kueue_cluster_queue_status",
    "1 for the ClusterQueue's current status.",
    ["cluster_queue", "status", *ROLE],
)
CQ_RESERVATION = Gauge(
    "kueue_cluster_queue_resource_reservation",
    "Quota reserved per flavor and resource.",
    ["cohort", "cluster_queue", "flavor", "resource", *ROLE],
)
CQ_USAGE = Gauge(
    "kueue_cluster_queue_resource_usage",
    "Quota used by admitted workloads per flavor and resource.",
    ["cohort", "cluster_queue", "flavor", "resource", *ROLE],
)
CQ_WEIGHTED_SHARE = Gauge(
    "kueue_cluster_queue_weighted_share",
    "Dominant resource share of the ClusterQueue under fair sharing (NaN: infinite).",
    ["cluster_queue", "cohort", *ROLE],
)
COHORT_WEIGHTED_SHARE = Gauge(
    "kueue_cohort_weighted_share",
    "Dominant resource share of the Cohort under fair sharing.",
    ["cohort", *ROLE],
)
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
