"""Pods stuck terminating on an unreachable node, forced as Kueue's failure-recovery policy does.

See docs/concepts.md#pods-stuck-on-an-unreachable-node.
:class:`~scheduler.kube.stuck_pods.StuckPods` keeps, from the Pod and Node
watches, the opted-in pods being deleted and the nodes tainted unreachable;
:class:`FailureRecovery` forces those due
(:mod:`scheduler.jobs.failure_recovery` decides): the pod's status says
``Failed`` with Kueue's condition, a Warning Event says why, and the pod is
deleted with no grace period (its UID as precondition).  With the gate
``FailureRecoveryPolicy`` off (Kueue's default) nothing is kept or forced.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from scheduler.api import objects
from scheduler.jobs.failure_recovery import REASON, forced_status
from scheduler.kube.rest import Conflict, NotFound, RestError
from scheduler.kube.stuck_pods import StuckPods
from scheduler.kube.writer import Writer

log = logging.getLogger("kuota.scheduler")


class FailureRecovery:
    """Forces the stuck pods :class:`StuckPods` finds due."""

    def __init__(self, *, stuck: StuckPods, writer: Writer, clock: Callable[[], datetime]) -> None:
        self.stuck = stuck
        self.writer = writer
        self.clock = clock

    async def reconcile(self) -> bool:
        """Force every pod due now; True when one was."""
        now = self.clock()
        acted = False
        for pod in self.stuck.due(now):
            status = forced_status(pod, now)
            try:
                await self.writer.force_delete_pod(pod, status)
            except (Conflict, NotFound):
                self.stuck.forget(pod)  # gone, or another pod of that name: the watch tells
                continue
            except RestError as failure:
                log.warning("could not force a stuck pod", extra={"error": str(failure)})
                continue
            self.stuck.forget(pod)
            message = status["conditions"][-1]["message"]
            self.writer.event(pod, kind="Pod", reason=REASON, message=message, event_type="Warning")
            log.info("forcefully deleted a stuck pod", extra={"pod": objects.key(pod)})
            acted = True
        return acted


__all__ = ["FailureRecovery"]
