"""What the scheduler records as it acts: Kueue's counters and histograms (docs/metrics.md).

Each method is one event Kueue counts, in the scheduler's words: a cycle, a
quota reservation, an admission, an eviction (and the preemption behind it),
the release of an evicted workload's quota, pods ready (waitForPodsReady), a
finished workload, a removed scheduling gate, a created Workload.  The
adapters call them with plain values they read from the objects (queue names,
priority class, times); everything here is arithmetic on the store.

LocalQueue series are recorded only for a LocalQueue that has them
(``local_queue`` None otherwise: the caller asked
:meth:`~scheduler.metrics.options.MetricOptions.local_queue_selected`).
The series of queues and cohorts that are gone are dropped by
:mod:`scheduler.metrics.pruning` (docs/metrics.md#series-of-deleted-queues).
A series that takes ``metrics.customLabels`` gets the values of its queue or
cohort as it is now (:mod:`scheduler.metrics.custom_values`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scheduler.metrics.custom_values import CustomValues
from scheduler.metrics.options import MetricOptions
from scheduler.metrics.store import SeriesStore


@dataclass(frozen=True, slots=True)
class QueueRef:
    """Where a workload was submitted and whose quota it uses."""

    cluster_queue: str
    local_queue: tuple[str, str] | None
    """(namespace, name) when that LocalQueue has series, else None."""
    priority_class: str = ""


class KueueRecorder:
    """Records Kueue's counters and histograms into a :class:`SeriesStore` (module docstring)."""

    def __init__(self, store: SeriesStore, options: MetricOptions | None = None) -> None:
        self.store = store
        self.options = options or MetricOptions()
        self.role = "standalone"
        """``replica_role`` of what is recorded now: ``leader``, ``follower`` or ``standalone``."""
        self.custom = CustomValues()
        """The ``custom_*`` label values of the queues and cohorts (none by default)."""

    def cycle(self, *, admitted: bool, seconds: float) -> None:
        labels = {"result": "success" if admitted else "inadmissible", "replica_role": self.role}
        self.store.inc("kueue_admission_attempts_total", labels)
        self.store.observe("kueue_admission_attempt_duration_seconds", labels, seconds)

    def preemption_skips(self, skipped: Mapping[str, int]) -> None:
        """The ClusterQueues whose workloads skipped preemptions in one cycle, and how many."""
        for cluster_queue, count in skipped.items():
            self.store.set_gauge(
                "kueue_admission_cycle_preemption_skips",
                {
                    "cluster_queue": cluster_queue,
                    "replica_role": self.role,
                    **self._of_cq(cluster_queue),
                },
                count,
            )

    def quota_reserved(self, queue: QueueRef, *, waited: float) -> None:
        """Quota was reserved, ``waited`` seconds after the workload was queued."""
        self._both(
            queue, "quota_reserved_workloads_total", "quota_reserved_wait_time_seconds", waited
        )

    def admitted(
        self, queue: QueueRef, *, waited: float, checks_waited: float | None, cohorts: Iterable[str]
    ) -> None:
        """Admitted (``checks_waited``: seconds its admission checks took, if it had any).

        ``cohorts``: every cohort above its ClusterQueue, nearest first.
        """
        self._both(queue, "admitted_workloads_total", "admission_wait_time_seconds", waited)
        if checks_waited is not None:
            waited_checks = max(0.0, checks_waited)
            self.store.observe(
                "kueue_admission_checks_wait_time_seconds", self._cq(queue), waited_checks
            )
            if queue.local_queue is not None:
                self.store.observe(
                    "kueue_local_queue_admission_checks_wait_time_seconds",
                    self._lq(queue),
                    waited_checks,
                )
        for cohort in cohorts:
            self.store.inc(
                "kueue_cohort_subtree_admitted_workloads_total",
                {
                    "cohort": cohort,
                    "priority_class": queue.priority_class,
                    "replica_role": self.role,
                    **self.custom.of("Cohort", cohort),
                },
            )

    def evicted(self, queue: QueueRef, *, reason: str, cause: str, first_time: bool) -> None:
        """Evicted for ``reason`` (``cause``: the underlying one, "" when none)."""
        why = {"reason": reason, "underlying_cause": cause}
        self.store.inc("kueue_evicted_workloads_total", {**self._cq(queue), **why})
        if first_time:
            self.store.inc("kueue_evicted_workloads_once_total", {**self._cq(queue), **why})
        if queue.local_queue is not None:
            self.store.inc("kueue_local_queue_evicted_workloads_total", {**self._lq(queue), **why})

    def pods_ready_to_evicted(
        self, queue: QueueRef, *, reason: str, cause: str, seconds: float
    ) -> None:
        """A workload whose pods were ready was evicted ``seconds`` after they became so."""
        self.store.observe(
            "kueue_pods_ready_to_evicted_time_seconds",
            {
                "cluster_queue": queue.cluster_queue,
                "reason": reason,
                "underlying_cause": cause,
                "replica_role": self.role,
                **self._of_cq(queue.cluster_queue),
            },
            max(0.0, seconds),
        )

    def pods_ready(self, queue: QueueRef, *, waited: float, since_admitted: float) -> None:
        """The workload's pods are ready for the first time since its admission (``Started``):
        ``waited`` seconds after it was queued, ``since_admitted`` after it was admitted."""
        scopes = [("kueue_", self._cq(queue))]
        if queue.local_queue is not None:
            scopes.append(("kueue_local_queue_", self._lq(queue)))
        for prefix, labels in scopes:
            self.store.observe(f"{prefix}ready_wait_time_seconds", labels, max(0.0, waited))
            self.store.observe(
                f"{prefix}admitted_until_ready_wait_time_seconds", labels, max(0.0, since_admitted)
            )

    def preempted(self, *, preempting_cluster_queue: str, reason: str) -> None:
        """A workload was preempted for one of ``preempting_cluster_queue``, for ``reason``."""
        self.store.inc(
            "kueue_preempted_workloads_total",
            {
                "preempting_cluster_queue": preempting_cluster_queue,
                "reason": reason,
                "replica_role": self.role,
                **self._of_cq(preempting_cluster_queue),
            },
        )

    def eviction_completed(self, *, cluster_queue: str, reason: str, seconds: float) -> None:
        """An evicted workload's quota was released ``seconds`` after its eviction."""
        self.store.observe(
            "kueue_workload_eviction_latency_seconds",
            {
                "cluster_queue": cluster_queue,
                "reason": reason,
                "replica_role": self.role,
                **self._of_cq(cluster_queue),
            },
            max(0.0, seconds),
        )

    def finished(self, queue: QueueRef) -> None:
        self.store.inc("kueue_finished_workloads_total", self._cq(queue))
        if queue.local_queue is not None:
            self.store.inc("kueue_local_queue_finished_workloads_total", self._lq(queue))

    def slice_replaced(self, *, cluster_queue: str) -> None:
        """An elastic job's workload slice was replaced by its resized successor."""
        self.store.inc(
            "kueue_replaced_workload_slices_total",
            {
                "cluster_queue": cluster_queue,
                "replica_role": self.role,
                **self._of_cq(cluster_queue),
            },
        )

    def gate_removed(self, *, gate: str, cluster_queue: str, group: bool, seconds: float) -> None:
        """Scheduling gate ``gate`` left a pod ``seconds`` after its Workload was admitted."""
        self.store.observe(
            "kueue_pod_scheduling_gate_removal_seconds",
            {
                "name": gate,
                "cluster_queue": cluster_queue,
                "is_group": "true" if group else "false",
                "replica_role": self.role,
                **self._of_cq(cluster_queue),
            },
            max(0.0, seconds),
        )

    def workload_created(self, *, job_kind: str, local_queue: str, seconds: float) -> None:
        """A job's Workload was created ``seconds`` after the job (at generation 1).

        ``local_queue``: ``namespace/name`` of the LocalQueue it names (custom labels only).
        """
        if self.options.creation_latency:
            self.store.observe(
                "kueue_workload_creation_latency_seconds",
                {
                    "job_kind": job_kind,
                    "replica_role": self.role,
                    **self.custom.of("LocalQueue", local_queue),
                },
                max(0.0, seconds),
            )

    def multikueue_dispatched(self, *, cluster_queue: str, cluster: str) -> None:
        """A copy of a Workload of ``cluster_queue`` was created on worker ``cluster``."""
        self.store.inc(
            "multikueue_workloads_dispatched_total",
            {"cluster_queue": cluster_queue, "cluster": cluster, "replica_role": self.role},
        )

    def multikueue_admitted(self, *, cluster_queue: str, cluster: str) -> None:
        """Worker ``cluster`` admitted the copy of a Workload of ``cluster_queue``."""
        self.store.inc(
            "multikueue_workloads_admitted_total",
            {"cluster_queue": cluster_queue, "cluster": cluster, "replica_role": self.role},
        )

    def _both(self, queue: QueueRef, counter: str, histogram: str, seconds: float) -> None:
        waited = max(0.0, seconds)
        self.store.inc(f"kueue_{counter}", self._cq(queue))
        self.store.observe(f"kueue_{histogram}", self._cq(queue), waited)
        if queue.local_queue is not None:
            self.store.inc(f"kueue_local_queue_{counter}", self._lq(queue))
            self.store.observe(f"kueue_local_queue_{histogram}", self._lq(queue), waited)

    def _cq(self, queue: QueueRef) -> dict[str, str]:
        return {
            "cluster_queue": queue.cluster_queue,
            "priority_class": queue.priority_class,
            "replica_role": self.role,
            **self._of_cq(queue.cluster_queue),
        }

    def _of_cq(self, cluster_queue: str) -> dict[str, str]:
        return self.custom.of("ClusterQueue", cluster_queue)

    def _lq(self, queue: QueueRef) -> dict[str, str]:
        assert queue.local_queue is not None
        namespace, name = queue.local_queue
        return {
            "name": name,
            "namespace": namespace,
            "priority_class": queue.priority_class,
            "replica_role": self.role,
            **self.custom.of("LocalQueue", f"{namespace}/{name}"),
        }


__all__ = ["KueueRecorder", "QueueRef"]
