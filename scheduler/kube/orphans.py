"""Workloads whose job is gone: finished, so their quota goes back.

A Job deleted with ``propagationPolicy: Orphan`` leaves its Workload
behind with no owner; Kueue finishes such a Workload (``Finished=True``,
reason ``OwnerNotFound``) and so does kuota (docs/concepts.md#workload-life-cycle).
Which Workloads are orphaned is decided by :func:`scheduler.jobs.controller.orphaned`
from the state's copy; this module writes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from scheduler import logs
from scheduler.jobs.propagation import OWNER_NOT_FOUND, OWNER_NOT_FOUND_MESSAGE, orphaned
from scheduler.kube.rest import Conflict, NotFound, RestError
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from scheduler.status.workload_status import finished_status

log = logging.getLogger("kuota.scheduler")


class OrphanedWorkloads:
    """Finishes the Workloads the state found orphaned (module docstring)."""

    def __init__(
        self, *, state: ClusterState, writer: Writer, clock: Callable[[], datetime]
    ) -> None:
        self.state = state
        self.writer = writer
        self.clock = clock

    async def finish(self) -> bool:
        """Finish every orphaned Workload marked since the last turn; True when any was."""
        wrote = False
        for key in sorted(self.state.workloads_orphaned.take()):
            workload = self.state.stored("Workload").get(key)
            if workload is None or not orphaned(workload):
                continue
            status = finished_status(
                workload, reason=OWNER_NOT_FOUND, message=OWNER_NOT_FOUND_MESSAGE, now=self.clock()
            )
            if status is None:
                continue
            with logs.bind(object=key):
                try:
                    self.state.remember(await self.writer.write_workload_status(workload, status))
                except (Conflict, NotFound):
                    continue  # the watch brings the new version, decided again then
                except RestError as failure:
                    self.state.workloads_orphaned.add(key)
                    log.warning(
                        "could not finish an orphaned workload",
                        extra={"workload": key, "error": str(failure)},
                    )
                    continue
            log.info("finished: its job is gone", extra={"workload": key})
            wrote = True
        return wrote


__all__ = ["OrphanedWorkloads"]
