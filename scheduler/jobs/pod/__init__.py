"""Kueue's ``pod`` framework: plain Pods queued through a scheduling gate.

:data:`POD` is the integration (registered on import); :func:`next_pod_action`
is the Pod controller's decision; :func:`gate` is what the webhook does to a
queued Pod at creation.
"""

from scheduler.jobs.pod.controller import next_pod_action
from scheduler.jobs.pod.integration import (
    MAIN_POD_SET,
    POD,
    POD_FRAMEWORK,
    Pod,
    gate,
    has_finalizer,
    is_gated,
    is_managed,
    pod_finished,
    ungate,
    without_finalizer,
)

__all__ = [
    "MAIN_POD_SET",
    "POD",
    "POD_FRAMEWORK",
    "Pod",
    "gate",
    "has_finalizer",
    "is_gated",
    "is_managed",
    "next_pod_action",
    "pod_finished",
    "ungate",
    "without_finalizer",
]
