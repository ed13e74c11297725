"""Kueue's failure-recovery policy: a pod stuck terminating on an unreachable node is let go.

See docs/concepts.md#pods-stuck-on-an-unreachable-node.  With the gate
``FailureRecoveryPolicy`` on, a pod annotated
``kueue.x-k8s.io/safe-to-forcefully-delete: "true"`` whose deletion began
more than :data:`FORCEFUL_TERMINATION_GRACE` ago, on a node tainted
``node.kubernetes.io/unreachable`` (its kubelet cannot finish the deletion),
is marked ``Failed`` with the condition ``KueueFailureRecovery`` and deleted
with no grace period.  Until then, the quota of its job stays held: kuota
never releases it early (docs/concepts.md#eviction-and-restore).  Every
function is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import SAFE_TO_FORCEFULLY_DELETE_ANNOTATION

FORCEFUL_TERMINATION_GRACE: Final = timedelta(minutes=1)
"""How long after its deletion began a stuck pod is forced (Kueue's fixed default)."""
UNREACHABLE_TAINT: Final = "node.kubernetes.io/unreachable"
CONDITION: Final = "KueueFailureRecovery"
REASON: Final = "KueueForcefullyDeleted"


def eligible(pod: Mapping[str, Any]) -> bool:
    """Whether the pod opted in and is being deleted: pure."""
    return objects.annotation(
        pod, SAFE_TO_FORCEFULLY_DELETE_ANNOTATION
    ) == "true" and objects.is_being_deleted(pod)


def due_at(pod: Mapping[str, Any]) -> datetime | None:
    """When an eligible pod may be forced, or None when it has no deletion time: pure."""
    started = objects.parse_time(objects.metadata(pod).get("deletionTimestamp"))
    return started + FORCEFUL_TERMINATION_GRACE if started is not None else None


def unreachable(node: Mapping[str, Any] | None) -> bool:
    """Whether the node carries the ``node.kubernetes.io/unreachable`` taint: pure."""
    taints = objects.spec(node).get("taints") if node is not None else None
    if not isinstance(taints, list):
        return False
    return any(isinstance(t, Mapping) and t.get("key") == UNREACHABLE_TAINT for t in taints)


def message(pod: Mapping[str, Any]) -> str:
    """Kueue's words for a forced pod: pure."""
    grace = objects.metadata(pod).get("deletionGracePeriodSeconds")
    seconds = (grace if isinstance(grace, int) else 0) + int(
        FORCEFUL_TERMINATION_GRACE.total_seconds()
    )
    node = objects.spec(pod).get("nodeName", "")
    return (
        f"Pod forcefully terminated after {_duration(seconds)} grace period due to unreachable "
        f"node `{node}` (triggered by `{SAFE_TO_FORCEFULLY_DELETE_ANNOTATION}` annotation)"
    )


def forced_status(pod: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """The pod's status once forced: ``Failed`` (unless it already ended), the condition: pure."""
    return failed_status(pod, CONDITION, REASON, message(pod), now)


def failed_status(
    pod: Mapping[str, Any], condition: str, reason: str, text: str, now: datetime
) -> dict[str, Any]:
    """The status of a pod kuota fails: phase ``Failed`` (unless it already ended) and the
    condition ``condition`` (True, ``reason``, ``text``) added to its own: pure."""
    status = copy.deepcopy(dict(objects.status(pod)))
    if status.get("phase") not in ("Succeeded", "Failed"):
        status["phase"] = "Failed"
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, Mapping)]
    conditions.append(
        {
            "type": condition,
            "status": "True",
            "reason": reason,
            "message": text,
            "lastTransitionTime": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    )
    status["conditions"] = conditions
    return status


def _duration(seconds: int) -> str:
    """Go's ``time.Duration`` text for whole seconds (``1m1s``, ``30s``): pure."""
    minutes, rest = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    text = ""
    if hours:
        text += f"{hours}h"
    if hours or minutes:
        text += f"{minutes}m"
    return text + f"{rest}s"


__all__ = [
    "CONDITION",
    "FORCEFUL_TERMINATION_GRACE",
    "REASON",
    "due_at",
    "eligible",
    "failed_status",
    "forced_status",
    "message",
    "unreachable",
]
