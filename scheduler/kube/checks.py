"""Admission checks in the live scheduler: the Workload reactions and unsupported checks.

The rules are pure (:mod:`scheduler.status.check_status`); this module
writes what they say, through the executor and the writer:

- a Workload whose check states changed (a check controller patched them;
  the state marks it) gets its next step (:func:`next_check_step`):
  ``Admitted=True`` once every check is Ready (then its Job starts), an
  eviction with reason ``AdmissionCheck`` on ``Retry`` (the executor's
  eviction path: the checks go back to ``Pending`` and the reservation is
  released once the Job is stopped), or, on ``Rejected``, the
  ``DeactivationTarget`` condition then ``spec.active: false`` (the
  deactivation eviction follows from the Job controller);
- an AdmissionCheck whose controller kuota ships no implementation of
  (``kueue.x-k8s.io/provisioning-request``) is marked ``Active=False`` with
  a reason that says so; checks of any other controller are that
  controller's to mark (MultiKueue's included) and are left alone.

Restart-safe: each step is computed from the Workload as stored, so a
scheduler that restarts with a Workload at ``QuotaReserved`` and pending
checks keeps its reservation (the engine counts it from its status) and
neither admits it twice nor starts its Job before the checks are Ready.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from scheduler import logs
from scheduler.api import objects
from scheduler.core.decisions import Evict
from scheduler.core.engine import Engine
from scheduler.kube.kueue_metrics import (
    RECORDER,
    cohorts_above,
    queue_ref,
    queued_since,
    seconds_since,
)
from scheduler.kube.rest import Conflict, NotFound, RestError
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer
from scheduler.status.check_status import (
    EVICTED_BY_CHECK,
    CheckStep,
    checks_admitted_status,
    deactivation_target_status,
    next_check_step,
    synced_status,
    unsupported_check_status,
)

log = logging.getLogger("kuota.scheduler")
Raw = dict[str, Any]


class CheckController:
    """Carries out the admission-check steps of dirty Workloads and AdmissionChecks."""

    def __init__(
        self,
        *,
        engine: Engine,
        state: ClusterState,
        writer: Writer,
        clock: Callable[[], datetime],
        evict: Callable[[Evict], Awaitable[None]],
        reconcile_job: Callable[[str], Awaitable[bool]],
    ) -> None:
        self.engine = engine
        self.state = state
        self.writer = writer
        self.clock = clock
        self._evict = evict
        self._reconcile_job = reconcile_job

    async def reconcile(self) -> bool:
        """Every dirty Workload and AdmissionCheck; True when something was written."""
        acted = False
        for name in sorted(self.state.checks_to_sync.take()):
            acted |= await self._check(name)
        for key in sorted(self.state.workloads_to_check.take()):
            workload = self.state.stored("Workload").get(key)
            if workload is None:
                continue
            flavors = (
                str(flavor)
                for assignment in objects.pod_set_assignments(workload)
                for flavor in (assignment.get("flavors") or {}).values()
            )
            applicable = self.engine.view.admission_checks_for(
                objects.admitted_cluster_queue(workload), flavors
            )
            step = next_check_step(workload, applicable)
            if step is None:
                continue
            with logs.bind(object=key):
                try:
                    await self._perform(key, workload, step)
                    acted = True
                except (Conflict, NotFound):
                    continue  # the watch brings the fresh object, which is decided again
                except RestError as failure:
                    self.state.workloads_to_check.add(key)
                    log.warning(
                        "admission check step failed",
                        extra={"workload": key, "step": step.kind, "error": str(failure)},
                    )
        return acted

    async def _perform(self, key: str, workload: Raw, step: CheckStep) -> None:
        now = self.clock()
        if step.kind == "retry":
            await self._evict(
                Evict(victim=key, preemptor=None, reason=EVICTED_BY_CHECK, message=step.message)
            )
            return
        if step.kind in ("reject", "deactivate"):
            # The target first, then spec.active: a crash in between is finished on restart.
            stored = workload
            if step.kind == "reject":
                stored = await self.writer.write_workload_status(
                    workload, deactivation_target_status(workload, step.message, now)
                )
                self.state.remember(stored)
                self.writer.event(
                    stored,
                    kind="Workload",
                    reason="AdmissionCheckRejected",
                    message=f"Deactivated due to {step.message}",
                    event_type="Warning",
                )
            spec = {**dict(objects.spec(stored)), "active": False}
            updated = await self.writer.update_workload(stored, {**stored, "spec": spec})
            self.state.remember(updated)
            log.info("deactivated: an admission check rejected it", extra={"why": step.message})
            return
        if step.kind == "sync":
            stored = await self.writer.write_workload_status(
                workload, synced_status(workload, step.checks, now)
            )
            self.state.remember(stored)
            self.state.workloads_to_check.add(key)  # its next step, from the synced list
            if not objects.is_admitted(stored):
                return
        else:
            stored = await self.writer.write_workload_status(
                workload, checks_admitted_status(workload, now)
            )
            self.state.remember(stored)
        cluster_queue = objects.admitted_cluster_queue(stored)
        reserved = objects.parse_time(
            (objects.condition(stored, "QuotaReserved") or {}).get("lastTransitionTime")
        )
        wait = f"{(now - reserved).total_seconds():.0f}s" if reserved else "0s"
        self.writer.event(
            stored,
            kind="Workload",
            reason="Admitted",
            message=f"Admitted by ClusterQueue {cluster_queue}, "
            f"wait time since reservation was {wait}",
        )
        RECORDER.admitted(
            queue_ref(self.state, stored, cluster_queue),
            waited=seconds_since(queued_since(stored), now),
            checks_waited=seconds_since(reserved, now),
            cohorts=cohorts_above(self.engine, cluster_queue),
        )
        log.info("admitted: every admission check is Ready", extra={"workload": key})
        job_key = self.state.job_key_of(stored)
        if job_key:
            self.state.jobs_to_decide.add(job_key)
            await self._reconcile_job(job_key)  # start it now

    async def _check(self, name: str) -> bool:
        check = self.state.stored("AdmissionCheck").get(name)
        if check is None:
            return False
        status = unsupported_check_status(check, self.clock())
        if status is None:
            return False
        try:
            stored = await self.writer.write_status("admissionchecks", check, status)
        except (Conflict, NotFound):
            return False
        except RestError as failure:
            self.state.checks_to_sync.add(name)
            log.warning(
                "could not write the AdmissionCheck status",
                extra={"admission_check": name, "error": str(failure)},
            )
            return False
        self.state.remember(stored)
        log.info(
            "admission check controller not supported: marked inactive",
            extra={"admission_check": name},
        )
        return True


__all__ = ["CheckController"]
