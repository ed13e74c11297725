"""Workload slices: an elastic job's scale-up, admitted in place of the slice it replaces.

See docs/concepts.md#elastic-jobs.  When a running elastic job asks for more
pods, its controller makes a new Workload (a *slice*) for the whole new size,
annotated with the slice it replaces.  The new slice is admitted as if the
old one's quota were already free (it takes that quota over) and in the old
one's flavors (its pods join those already running); the old slice is then
finished, in the same step, so the quota is never counted twice nor left
unclaimed in between.

A new slice whose old one does not hold quota in the same ClusterQueue
(still pending, being evicted, admitted elsewhere) waits: its controller
settles what the job is then (docs/concepts.md#elastic-jobs).  Pure, apart
from the round's temporary removal of the old slice's usage.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.nomination import Round
from scheduler.core.state import ADMITTED, FINISHED, WorkloadRecord


def replaced_slice(
    records: Mapping[str, WorkloadRecord], record: WorkloadRecord, cq: str
) -> WorkloadRecord | str | None:
    """What ``record`` replaces in ``cq``: the old slice, a reason to wait, or None: pure.

    None: it replaces nothing (or a slice already finished): an ordinary workload.
    """
    if record.replaces is None:
        return None
    old = records.get(record.replaces)
    if old is None or old.state == FINISHED:
        return None
    if old.state == ADMITTED and not old.evicted and old.cluster_queue == cq and old.usage:
        return old
    return (
        f"waiting for the workload slice it replaces, {record.replaces}, "
        f"to hold quota in ClusterQueue {cq}"
    )


def pinned_flavors(cq: ClusterQueueInfo, old: WorkloadRecord) -> dict[tuple[str, int], str]:
    """The old slice's flavor per (pod set, resource group): the new slice keeps them: pure."""
    pinned: dict[tuple[str, int], str] = {}
    for pod_set in old.admission:
        for resource, flavor in pod_set.flavors.items():
            index = cq.group_of.get(resource)
            if index is not None:
                pinned.setdefault((pod_set.name, index), flavor)
    return pinned


@contextmanager
def old_slice_gone(cycle: Round, old: WorkloadRecord | None) -> Iterator[None]:
    """Count the old slice's quota and topology domains as free for a while; always restored."""
    if old is None:
        yield
        return
    quota = cycle.sched.quota
    cq = old.cluster_queue
    assert cq is not None and old.usage is not None
    node = quota.cluster_queues[cq].node
    assert node is not None
    with cycle.snapshot.without([(node, old.usage[cq])]), quota.topology.held.without([old.key]):
        yield


def retire(cycle: Round, old: WorkloadRecord) -> None:
    """The new slice was admitted: the old one's quota is its now, and the old one is done."""
    cycle.sched.quota.release(old)
    cycle.sched.queues.unqueue(old)
    old.state = FINISHED
    old.forget_status()


__all__ = ["old_slice_gone", "pinned_flavors", "replaced_slice", "retire"]
