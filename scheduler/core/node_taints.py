"""Has a tainted node failed for a workload placed on it? (pure)

See docs/concepts.md#topology-aware-scheduling.  As Kueue does with its gate
``TASReplaceNodeOnNodeTaints`` (on by default), a ``NoSchedule`` or
``NoExecute`` taint makes a node fail for a workload when one of the
workload's pod sets placed there does not tolerate the taint for good: not
at all, or only for ``tolerationSeconds`` (the pods are evicted then).  The
tolerations read are the pod set's own and those of the flavor it was
admitted on.  A taint every such pod set tolerates without a time limit
leaves the node healthy.  Whether the node's pods have ended yet (so that
the node may be given up) is the caller's to check.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scheduler.api.models import Taint, Toleration
from scheduler.core.decisions import PodSetAdmission
from scheduler.core.node_matching import tolerates
from scheduler.core.tas.cache import TopologyCache
from scheduler.core.workload import PodSetInfo

_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def failing_taint(
    taints: Iterable[Taint], tolerations_per_pod_set: Sequence[Sequence[Toleration]]
) -> Taint | None:
    """The first blocking taint some pod set does not tolerate for good, or None: pure.

    ``tolerations_per_pod_set``: the tolerations of each pod set placed on
    the node (its own and its flavor's).
    """
    for taint in taints:
        if taint.effect not in _BLOCKING_EFFECTS:
            continue
        for tolerations in tolerations_per_pod_set:
            lasting = [t for t in tolerations if t.toleration_seconds is None]
            if not any(tolerates(toleration, taint) for toleration in lasting):
                return taint
    return None


def failing_taint_for(
    admissions: Sequence[PodSetAdmission],
    pod_sets: Sequence[PodSetInfo],
    node: str,
    cache: TopologyCache,
) -> Taint | None:
    """:func:`failing_taint` of ``node`` for a workload's admission and pod sets: pure."""
    found = cache.node(node)
    if found is None or not found.taints:
        return None
    by_name = {pod_set.name: pod_set for pod_set in pod_sets}
    per_pod_set: list[tuple[Toleration, ...]] = []
    for admission in admissions:
        placed = admission.topology_assignment
        pod_set = by_name.get(admission.name)
        if placed is None or pod_set is None:
            continue
        if not any(domain.values[-1] == node for domain in placed.domains):
            continue
        flavors = [cache.flavor(name) for name in sorted(set(admission.flavors.values()))]
        from_flavors = tuple(
            t for flavor in flavors if flavor is not None for t in flavor.tolerations
        )
        per_pod_set.append((*pod_set.tolerations, *from_flavors))
    return failing_taint(found.taints, per_pod_set)


__all__ = ["failing_taint", "failing_taint_for"]
