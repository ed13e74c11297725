"""Kueue's gauges, read out of the engine's state at scrape time (docs/metrics.md).

A gauge says what is true now: how many workloads wait, how much quota is
reserved, which cohort a queue hangs under.  The engine holds all of it, so
the gauges are computed from it when Prometheus asks, in one pass over the
workload records, instead of being kept up to date on every event.  A
queue that is gone has no series, with nothing to clean up, exactly as
Kueue deletes a deleted queue's series.

What the engine does not hold comes in as plain facts from the adapter: the
LocalQueues (labels, for ``localQueueSelector``, and their ``Active``
condition), for the ``UnadmittedWorkloadsObservability`` gauges, the
reasons of the Workloads' conditions, and the ``custom_*`` label values of
the queues, cohorts and Workloads (:mod:`scheduler.metrics.custom_values`).

Amounts are the engine's integers (docs/scheduling.md#quantities) turned into
the unit Kueue reports: cores for ``cpu``, the base unit (bytes, counts)
for every other resource.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scheduler.core.engine import Engine
from scheduler.core.resource_node import QuotaNode, subtree_queues
from scheduler.core.resources import FRValues
from scheduler.core.state import ADMITTED, FINISHED, PENDING, WorkloadRecord
from scheduler.metrics.custom_values import CustomValues
from scheduler.metrics.options import MetricOptions
from scheduler.metrics.store import LabelValues

Samples = dict[str, list[tuple[LabelValues, float]]]
"""Gauge name -> (label values in catalogue order, value)."""

CONDITION_STATUSES = ("True", "False", "Unknown")
CQ_STATUSES = ("pending", "active", "terminating")


@dataclass(frozen=True, slots=True)
class LocalQueueFacts:
    """A LocalQueue as the gauges need it (from its stored object)."""

    namespace: str
    name: str
    cluster_queue: str
    labels: Mapping[str, str]
    active: str
    """Status of its ``Active`` condition: ``True``, ``False`` or ``Unknown``."""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class UnadmittedFacts:
    """A Workload that is not admitted, as ``kueue_unadmitted_workloads`` counts it."""

    namespace: str
    queue_name: str
    reason: str
    """Its ``Admitted`` condition's reason (``NoReservation`` when it has none)."""
    cause: str
    """Its ``QuotaReserved`` condition's reason ("" when True, ``PendingEvaluation`` absent)."""


def amount(resource: str, value: int) -> float:
    """An engine integer in Kueue's reporting unit (cores for cpu): pure."""
    return value / 1000 if resource == "cpu" else float(value)


@dataclass
class _Tally:
    """What one pass over the workload records counts, per queue."""

    finished_cq: Counter[str]
    finished_lq: Counter[str]
    reserving_lq: Counter[str]
    admitted_cq: Counter[str]
    admitted_lq: Counter[str]
    pending_lq: Counter[tuple[str, str]]
    admitted_usage_cq: dict[str, FRValues]
    reserved_usage_lq: dict[str, FRValues]
    admitted_usage_lq: dict[str, FRValues]
    pending_requests_cq: dict[str, dict[str, int]]
    admitted_values: dict[str, Counter[LabelValues]]
    """ClusterQueue -> admitted workloads per combination of Workload custom label values."""
    no_workload_values: LabelValues | None = None
    """The Workload custom label values of none (None: there are no Workload custom labels)."""


def _add(into: dict[str, FRValues], key: str, usage: FRValues) -> None:
    target = into.setdefault(key, {})
    for fr, value in usage.items():
        target[fr] = target.get(fr, 0) + value


def _tally(engine: Engine, lq_targets: Mapping[str, str], custom: CustomValues) -> _Tally:
    """Count every workload record once, by ClusterQueue and LocalQueue: pure."""
    tally = _Tally(
        Counter(), Counter(), Counter(), Counter(), Counter(), Counter(), {}, {}, {}, {}, {}
    )
    if custom.labels.of_kind("Workload"):
        tally.no_workload_values = tuple(custom.labels.unknown("Workload").values())
    for record in engine.view.records.values():
        lq = f"{record.namespace}/{record.queue_name or ''}"
        if record.state == FINISHED:
            tally.finished_lq[lq] += 1
            cq = record.cluster_queue or lq_targets.get(lq)
            if cq:
                tally.finished_cq[cq] += 1
        elif record.state == ADMITTED:
            _count_reservation(tally, record, lq, custom)
        elif record.state == PENDING and record.queued_in is not None:
            _count_pending(engine, tally, record, lq)
    return tally


def _count_reservation(
    tally: _Tally, record: WorkloadRecord, lq: str, custom: CustomValues
) -> None:
    tally.reserving_lq[lq] += 1
    usage = next(iter((record.usage or {}).items()), None)
    if usage is not None:
        _add(tally.reserved_usage_lq, lq, usage[1])
    if record.awaiting_checks:
        return
    tally.admitted_lq[lq] += 1
    if usage is not None:
        tally.admitted_cq[usage[0]] += 1
        if tally.no_workload_values is not None:
            by_values = tally.admitted_values.setdefault(usage[0], Counter())
            by_values[custom.values("Workload", record.key)] += 1
        _add(tally.admitted_usage_cq, usage[0], usage[1])
        _add(tally.admitted_usage_lq, lq, usage[1])


def _count_pending(engine: Engine, tally: _Tally, record: WorkloadRecord, lq: str) -> None:
    cq = record.queued_in
    assert cq is not None
    queue = engine.queues.pending.queue(cq)
    parked = queue is not None and queue.is_inadmissible(record.key)
    active = engine.cache.is_active(cq)
    tally.pending_lq[(lq, "inadmissible" if parked or not active else "active")] += 1
    requests = tally.pending_requests_cq.setdefault(cq, {})
    for pod_set in record.pod_sets:
        for resource, value in pod_set.requests.items():
            requests[resource] = requests.get(resource, 0) + value


def queue_gauges(
    engine: Engine,
    local_queues: Sequence[LocalQueueFacts],
    options: MetricOptions,
    role: str,
    unadmitted: Iterable[UnadmittedFacts] = (),
    custom: CustomValues | None = None,
) -> Samples:
    """Every gauge of ClusterQueues, cohorts and LocalQueues now, for ``role``: pure."""
    samples: Samples = defaultdict(list)
    custom = custom or CustomValues()
    lq_targets = {lq.key: lq.cluster_queue for lq in local_queues}
    tally = _tally(engine, lq_targets, custom)
    forest = engine.cache.tree.forest
    for name in engine.view.cluster_queue_names():
        _cluster_queue(
            engine, name, tally, options, (role, *custom.values("ClusterQueue", name)), samples
        )
    for node in forest.cohorts.values():
        _cohort(engine, node, tally, options, role, custom, samples)
    for lq in local_queues:
        if options.local_queue_selected(lq.labels):
            _local_queue(engine, lq, tally, (role, *custom.values("LocalQueue", lq.key)), samples)
    if options.unadmitted:
        _unadmitted(unadmitted, local_queues, options, role, custom, samples)
    return samples


def _cluster_queue(
    engine: Engine,
    name: str,
    tally: _Tally,
    options: MetricOptions,
    tail: LabelValues,
    out: Samples,
) -> None:
    """``tail``: the replica role, then the ClusterQueue's custom label values."""
    status = engine.view.cluster_queue_status(name)
    info = engine.cache.cluster_queues[name]
    queue = engine.queues.pending.queue(name)
    active = queue.active_count if queue is not None else 0
    parked = (len(queue) if queue is not None else 0) - active
    if not status.active:
        active, parked = 0, active + parked
    out["kueue_pending_workloads"] += [
        ((name, "active", *tail), active),
        ((name, "inadmissible", *tail), parked),
    ]
    out["kueue_reserving_active_workloads"].append(((name, *tail), status.reserving))
    if tally.no_workload_values is None:
        out["kueue_admitted_active_workloads"].append(((name, *tail), status.admitted))
    else:  # Workload custom labels: one series per combination of their values
        by_workload = tally.admitted_values.get(name) or Counter({tally.no_workload_values: 0})
        for values, count in sorted(by_workload.items()):
            out["kueue_admitted_active_workloads"].append(((name, *tail, *values), count))
    out["kueue_finished_workloads"].append(((name, *tail), tally.finished_cq[name]))
    current = (
        "terminating"
        if status.active_reason == "Terminating"
        else ("active" if status.active else "pending")
    )
    for state in CQ_STATUSES:
        out["kueue_cluster_queue_status"].append(((name, state, *tail), float(state == current)))
    node = info.node
    cohort = info.cohort or ""
    if options.cohort_info:
        root = node.root().name if node is not None and node.parent is not None else cohort
        out["kueue_cluster_queue_info"].append(((name, cohort, root, *tail), 1.0))
    if not options.cluster_queue_resources or node is None:
        return
    reserved = engine.cache.usage.get(name, {})
    admitted = tally.admitted_usage_cq.get(name, {})
    for fr, nominal in node.nominal.items():
        flavor, resource = fr
        labels = (cohort, name, flavor, resource, *tail)
        out["kueue_cluster_queue_nominal_quota"].append((labels, amount(resource, nominal)))
        out["kueue_cluster_queue_borrowing_limit"].append(
            (labels, _limit(resource, node.borrowing_limit, fr))
        )
        out["kueue_cluster_queue_lending_limit"].append(
            (labels, _limit(resource, node.lending_limit, fr))
        )
        out["kueue_cluster_queue_resource_reservation"].append(
            (labels, amount(resource, reserved.get(fr, 0)))
        )
        out["kueue_cluster_queue_resource_usage"].append(
            (labels, amount(resource, admitted.get(fr, 0)))
        )
    pending = dict.fromkeys(sorted({fr[1] for fr in node.nominal}), 0)
    pending.update(tally.pending_requests_cq.get(name, {}))
    for resource, value in pending.items():
        out["kueue_cluster_queue_resource_pending"].append(
            ((name, resource, *tail), amount(resource, value))
        )
    if options.fair_sharing and status.share is not None:
        # The share status.fairSharing.weightedShare rounds up; NaN when infinite, as Kueue.
        share = status.share.precise()
        weighted = math.nan if math.isinf(share) else share
        out["kueue_cluster_queue_weighted_share"].append(((name, cohort, *tail), weighted))


def _limit(resource: str, limits: FRValues, fr: tuple[str, str]) -> float:
    limit = limits.get(fr)
    return math.inf if limit is None else amount(resource, limit)


def _cohort(
    engine: Engine,
    node: QuotaNode,
    tally: _Tally,
    options: MetricOptions,
    role: str,
    custom: CustomValues,
    out: Samples,
) -> None:
    name = node.name
    tail = (role, *custom.values("Cohort", name))
    for (flavor, resource), value in sorted(node.subtree_quota.items()):
        if value > 0:
            out["kueue_cohort_subtree_quota"].append(
                ((name, flavor, resource, *tail), amount(resource, value))
            )
    members = subtree_queues(node)
    reserved: FRValues = {}
    for cq in members:
        for fr, value in engine.cache.usage.get(cq, {}).items():
            reserved[fr] = reserved.get(fr, 0) + value
    for (flavor, resource), value in sorted(reserved.items()):
        if value > 0:
            out["kueue_cohort_subtree_resource_reservations"].append(
                ((name, flavor, resource, *tail), amount(resource, value))
            )
    admitted = sum(tally.admitted_cq[cq] for cq in members)
    # As Kueue, which reports it from each ClusterQueue below: their custom label values.
    queue_values = sorted({custom.values("ClusterQueue", cq) for cq in members}) or [
        tuple(custom.labels.unknown("ClusterQueue").values())
    ]
    for values in queue_values:
        out["kueue_cohort_subtree_admitted_active_workloads"].append(
            ((name, role, *values), admitted)
        )
    if options.cohort_info:
        parent = node.parent.name if node.parent is not None else ""
        out["kueue_cohort_info"].append(((name, parent, node.root().name, *tail), 1.0))
    share = engine.view.cohort_share(name) if options.fair_sharing else None
    if share is not None:
        # The share a Cohort's status.fairSharing.weightedShare rounds up.
        out["kueue_cohort_weighted_share"].append(((name, *tail), share.precise()))


def _local_queue(
    engine: Engine, lq: LocalQueueFacts, tally: _Tally, tail: LabelValues, out: Samples
) -> None:
    """``tail``: the replica role, then the LocalQueue's custom label values."""
    key = lq.key
    ids = (lq.name, lq.namespace)
    for state in ("active", "inadmissible"):
        out["kueue_local_queue_pending_workloads"].append(
            ((*ids, state, *tail), tally.pending_lq[(key, state)])
        )
    out["kueue_local_queue_finished_workloads"].append(((*ids, *tail), tally.finished_lq[key]))
    for status in CONDITION_STATUSES:
        out["kueue_local_queue_status"].append(((*ids, status, *tail), float(status == lq.active)))
    info = engine.cache.cluster_queues.get(lq.cluster_queue)
    if info is None or info.node is None:
        return  # as Kueue: the cache's LocalQueue series go with their ClusterQueue
    out["kueue_local_queue_reserving_active_workloads"].append(
        ((*ids, *tail), tally.reserving_lq[key])
    )
    out["kueue_local_queue_admitted_active_workloads"].append(
        ((*ids, *tail), tally.admitted_lq[key])
    )
    reserved = tally.reserved_usage_lq.get(key, {})
    admitted = tally.admitted_usage_lq.get(key, {})
    for fr in info.node.nominal:
        flavor, resource = fr
        labels = (*ids, flavor, resource, *tail)
        out["kueue_local_queue_resource_reservation"].append(
            (labels, amount(resource, reserved.get(fr, 0)))
        )
        out["kueue_local_queue_resource_usage"].append(
            (labels, amount(resource, admitted.get(fr, 0)))
        )


def _unadmitted(
    workloads: Iterable[UnadmittedFacts],
    local_queues: Sequence[LocalQueueFacts],
    options: MetricOptions,
    role: str,
    custom: CustomValues,
    out: Samples,
) -> None:
    by_key = {lq.key: lq for lq in local_queues}
    per_cq: Counter[tuple[str, str, str]] = Counter()
    per_lq: Counter[tuple[str, str, str, str, str]] = Counter()
    for workload in workloads:
        lq = by_key.get(f"{workload.namespace}/{workload.queue_name}")
        cq = lq.cluster_queue if lq is not None else ""
        if cq:
            per_cq[(cq, workload.reason, workload.cause)] += 1
        if lq is not None and options.local_queue_selected(lq.labels):
            per_lq[(lq.name, lq.namespace, cq, workload.reason, workload.cause)] += 1
    for labels, count in sorted(per_cq.items()):
        cq_values = custom.values("ClusterQueue", labels[0])
        out["kueue_unadmitted_workloads"].append(((*labels, role, *cq_values), count))
    for lq_labels, count in sorted(per_lq.items()):
        lq_values = custom.values("LocalQueue", f"{lq_labels[1]}/{lq_labels[0]}")
        out["kueue_local_queue_unadmitted_workloads"].append(
            ((*lq_labels, role, *lq_values), count)
        )


__all__ = ["LocalQueueFacts", "Samples", "UnadmittedFacts", "amount", "queue_gauges"]
