"""Pods sent to a node they can never run on, failed as Kueue's node controller fails them (pure).

See docs/concepts.md#topology-aware-scheduling.  A pod placed by topology
loses its gate with its node's hostname as node selector; until
kube-scheduler binds it, it is *steered* there.  When that node can no
longer take it, the pod would stay ``Pending`` for ever, and its job would
never finish: the node was deleted, is not ``Ready``, carries a taint the
workload does not tolerate for good, or is no longer part of the
workload's topology assignment (its pods were moved elsewhere).  Such a pod
is marked ``Failed`` with Kueue's condition ``TerminatedByKueue`` (reason
``UnschedulableOnAssignedNode``), and its job's controller makes a new pod,
which gets a domain of the current assignment.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.topology_assignment import HOSTNAME_LABEL, TopologyAssignment
from scheduler.jobs.failure_recovery import failed_status
from scheduler.jobs.topology_ungate import gated

CONDITION: Final = "TerminatedByKueue"
REASON: Final = "UnschedulableOnAssignedNode"
MESSAGE: Final = "Pod terminated by Kueue NodeController due to node taint"
EVENT_REASON: Final = "PodTerminatedByKueue"


def steered_host(pod: Mapping[str, Any]) -> str | None:
    """The node a pending, unbound, ungated pod is steered to by its hostname selector: pure."""
    spec = objects.spec(pod)
    if spec.get("nodeName") or gated(pod) or objects.is_being_deleted(pod):
        return None
    if objects.status(pod).get("phase") not in (None, "", "Pending"):
        return None
    selector = spec.get("nodeSelector")
    host = selector.get(HOSTNAME_LABEL) if isinstance(selector, Mapping) else None
    return host if isinstance(host, str) and host else None


def assigned_hosts(workload: Mapping[str, Any]) -> set[str]:
    """The nodes a Workload's admission places pods on (hostname-level assignments): pure."""
    admission = objects.status(workload).get("admission")
    found: set[str] = set()
    if not isinstance(admission, Mapping):
        return found
    for entry in admission.get("podSetAssignments") or []:
        encoded = entry.get("topologyAssignment") if isinstance(entry, Mapping) else None
        if not isinstance(encoded, Mapping):
            continue
        try:
            assignment = TopologyAssignment.decoded(encoded)
        except ValueError:
            continue
        if assignment.levels and assignment.levels[-1] == HOSTNAME_LABEL:
            found.update(domain.values[-1] for domain in assignment.domains)
    return found


def terminated_status(pod: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The pod's status once failed: phase ``Failed`` and Kueue's condition: pure."""
    return failed_status(pod, CONDITION, REASON, MESSAGE, now)


__all__ = [
    "CONDITION",
    "EVENT_REASON",
    "MESSAGE",
    "REASON",
    "assigned_hosts",
    "steered_host",
    "terminated_status",
]
