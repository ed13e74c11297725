"""Kueue's series in the live scheduler: recorded from the objects it writes, read from its state.

The process-wide :data:`RECORDER` (with its :data:`STORE`) takes the events
the writers carry out; the helpers below read what each event needs from the
raw objects (the LocalQueue a Workload was submitted to, its priority class,
since when it was queued).  :class:`LiveGauges` is the collector's gauge
source: the engine and the stored LocalQueues and Workloads of the
scheduler's current state, read at scrape time (:mod:`scheduler.metrics.gauges`).
The collector is registered once, on prometheus-client's default registry,
which the scheduler serves (docs/metrics.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from prometheus_client import REGISTRY

from scheduler.api import objects
from scheduler.api.custom_labels import CustomLabels, SourceKind
from scheduler.api.refs import KUEUE_GROUP
from scheduler.core.engine import Engine
from scheduler.kube.state import ClusterState
from scheduler.metrics.catalog import series
from scheduler.metrics.custom_values import CustomValues
from scheduler.metrics.exposition import KueueCollector, build_info
from scheduler.metrics.gauges import LocalQueueFacts, Samples, UnadmittedFacts, queue_gauges
from scheduler.metrics.pruning import forget_other_roles, prune
from scheduler.metrics.recorder import KueueRecorder, QueueRef
from scheduler.metrics.store import SeriesStore
from scheduler.version import kuota_version

Raw = Mapping[str, Any]

STORE = SeriesStore()
RECORDER = KueueRecorder(STORE)
COLLECTOR = KueueCollector(
    STORE, options=lambda: RECORDER.options, build=build_info(kuota_version())
)
REGISTRY.register(COLLECTOR)


def queued_since(workload: Raw) -> datetime | None:
    """When the workload was last queued: its ``Requeued`` condition, else its creation: pure."""
    requeued = objects.condition(workload, "Requeued")
    if requeued is not None:
        moment = objects.parse_time(requeued.get("lastTransitionTime"))
        if moment is not None:
            return moment
    return objects.creation_time(workload)


def pods_ready_to_evicted(workload: Raw) -> float | None:
    """Seconds from ``PodsReady`` to ``Evicted``, both True, else None (Kueue's
    ``workloadsWithPodsReadyToEvictedTime``): pure."""
    times = []
    for kind in ("PodsReady", "Evicted"):
        condition = objects.condition(workload, kind)
        if condition is None or condition.get("status") != "True":
            return None
        moment = objects.parse_time(condition.get("lastTransitionTime"))
        if moment is None:
            return None
        times.append(moment)
    ready, evicted = times
    return (evicted - ready).total_seconds()


def seconds_since(moment: datetime | None, now: datetime) -> float:
    """Seconds from ``moment`` to ``now`` (0 when unknown or in the future): pure."""
    return max(0.0, (now - moment).total_seconds()) if moment is not None else 0.0


def queue_ref(state: ClusterState, workload: Raw, cluster_queue: str) -> QueueRef:
    """The queues a Workload's series go to (its LocalQueue only when that has series): pure."""
    namespace = objects.namespace(workload) or ""
    queue_name = objects.workload_queue_name(workload)
    local_queue = state.stored("LocalQueue").get(f"{namespace}/{queue_name}")
    selected = local_queue is not None and RECORDER.options.local_queue_selected(
        objects.labels(local_queue)
    )
    return QueueRef(
        cluster_queue=cluster_queue,
        local_queue=(namespace, queue_name) if selected else None,
        priority_class=objects.priority_class_name(workload),
    )


def cohorts_above(engine: Engine, cluster_queue: str) -> list[str]:
    """Every cohort above ``cluster_queue``, nearest first: pure."""
    info = engine.cache.cluster_queues.get(cluster_queue)
    node = info.node if info is not None else None
    found = []
    parent = node.parent if node is not None else None
    while parent is not None:
        found.append(parent.name)
        parent = parent.parent
    return found


def evicted_before(workload: Raw, reason: str, cause: str) -> bool:
    """Whether the Workload's ``schedulingStats`` already count an eviction like this: pure."""
    stats = objects.status(workload).get("schedulingStats") or {}
    return any(
        entry.get("reason") == reason
        and (entry.get("underlyingCause") or "") == cause
        and int(entry.get("count") or 0) > 0
        for entry in stats.get("evictions") or []
    )


def removed_gates(old: Raw, new: Raw) -> list[str]:
    """kuota's (``kueue.x-k8s.io/...``) scheduling gates ``old`` has and ``new`` lacks: pure."""

    def names(obj: Raw) -> set[str]:
        gates = objects.spec(obj).get("schedulingGates") or []
        return {str(g.get("name")) for g in gates if isinstance(g, Mapping) and g.get("name")}

    return sorted(g for g in names(old) - names(new) if g.startswith(f"{KUEUE_GROUP}/"))


def local_queue_facts(local_queues: Mapping[str, Raw]) -> list[LocalQueueFacts]:
    """Every stored LocalQueue as the gauges read it: pure."""
    facts = []
    for queue in local_queues.values():
        active = objects.condition(queue, "Active")
        status = str(active.get("status")) if active is not None else "Unknown"
        facts.append(
            LocalQueueFacts(
                namespace=objects.namespace(queue) or "",
                name=objects.name(queue),
                cluster_queue=str(objects.spec(queue).get("clusterQueue") or ""),
                labels=objects.labels(queue),
                active=status if status in ("True", "False") else "Unknown",
            )
        )
    return facts


def unadmitted_facts(workloads: Mapping[str, Raw]) -> list[UnadmittedFacts]:
    """The Workloads not admitted (nor finished, nor being deleted), by their reasons: pure."""
    facts = []
    for workload in workloads.values():
        if (
            objects.is_admitted(workload)
            or objects.is_finished(workload)
            or objects.is_being_deleted(workload)
        ):
            continue
        admitted = objects.condition(workload, "Admitted")
        reserved = objects.condition(workload, "QuotaReserved")
        if reserved is None:
            cause = "PendingEvaluation"
        elif reserved.get("status") == "True":
            cause = ""
        else:
            cause = str(reserved.get("reason") or "")
        facts.append(
            UnadmittedFacts(
                namespace=objects.namespace(workload) or "",
                queue_name=objects.workload_queue_name(workload),
                reason=str((admitted or {}).get("reason") or "NoReservation"),
                cause=cause,
            )
        )
    return facts


def use_custom_labels(labels: CustomLabels, current: Callable[[], ClusterState]) -> None:
    """Record and read the ``custom_*`` labels of ``labels``, from the current state's objects."""
    STORE.custom_labels = labels

    def lookup(kind: SourceKind, ref: str) -> Raw | None:
        return current().stored(kind).get(ref)

    RECORDER.custom = CustomValues(labels, lookup)


class LiveGauges:
    """The gauges of the scheduler's current engine and state (the collector's source).

    Each scrape also drops the recorded series of queues and cohorts that are
    gone, and remembers the weighted shares (Kueue keeps a deleted
    ClusterQueue's last one).
    """

    def __init__(self, current: Callable[[], tuple[Engine, ClusterState]]) -> None:
        self.current = current

    def __call__(self) -> Samples:
        engine, state = self.current()
        recorder = RECORDER
        facts = local_queue_facts(state.stored("LocalQueue"))
        unadmitted = (
            unadmitted_facts(state.stored("Workload")) if recorder.options.unadmitted else []
        )
        samples = queue_gauges(
            engine, facts, recorder.options, recorder.role, unadmitted, recorder.custom
        )
        prune(
            recorder.store,
            cluster_queues=set(engine.view.cluster_queue_names()),
            local_queues={(fact.namespace, fact.name) for fact in facts},
            cohorts=set(engine.cache.tree.forest.cohorts),
        )
        forget_other_roles(recorder.store, recorder.role)
        name = "kueue_cluster_queue_weighted_share"
        names = STORE.labels_of(series(name))
        for labels, value in samples.get(name, ()):
            STORE.set_gauge(name, dict(zip(names, labels, strict=True)), value)
        return samples


__all__ = [
    "COLLECTOR",
    "RECORDER",
    "STORE",
    "LiveGauges",
    "cohorts_above",
    "evicted_before",
    "local_queue_facts",
    "pods_ready_to_evicted",
    "queue_ref",
    "queued_since",
    "removed_gates",
    "use_custom_labels",
    "seconds_since",
    "unadmitted_facts",
]
