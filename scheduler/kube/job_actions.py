"""The Job controller's actions (:mod:`scheduler.jobs.controller`), carried out as API writes.

One handler per action; dispatch is a ``match`` over the closed union
ending in ``assert_never``, so the type checker fails the build when an
action has no handler.  Nothing here names a kind: what a kind does
differently is already in the action (the job as it should be written, the
members of a group).  Every handler raises what the API answered
(:class:`~scheduler.kube.rest.RestError`); the reconciler decides what a
failure means.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, assert_never

from scheduler.api import objects
from scheduler.api.refs import WAITING_FOR_REPLACEMENT_PODS, WORKLOAD_SLICE_REPLACED
from scheduler.core.decisions import Evict
from scheduler.jobs.actions import (
    Action,
    CreateWorkload,
    DeactivateWorkload,
    DeleteWorkload,
    FinalizePod,
    FinalizePods,
    FinishWorkload,
    GroupAction,
    OwnWorkload,
    PropagateToWorkload,
    ReleaseWorkload,
    RemoveExcessPods,
    RestoreJob,
    SetReclaimablePods,
    SetWaitingForReplacement,
    StartJob,
    StartPods,
    StopPod,
    StopPods,
    SuspendJob,
    UpdateWorkload,
    WaitForFlavor,
)
from scheduler.jobs.elastic import RetireSlice, ScaleDownWorkload, without_elastic_gate
from scheduler.jobs.replica_groups import (
    HoldWorkload,
    PlacePods,
    ReleaseHold,
    RemoveWorkload,
    ReplaceWorkload,
    ReplicaAction,
)
from scheduler.kube.admission_writer import AdmissionWriter
from scheduler.kube.informer import Event
from scheduler.kube.kueue_metrics import RECORDER, queue_ref, removed_gates, seconds_since
from scheduler.kube.state import ClusterState
from scheduler.kube.writer import Writer, job_kind
from scheduler.status.check_status import deactivation
from scheduler.status.conditions import timestamp
from scheduler.status.workload_status import (
    condition_status,
    finished_status,
    off_hold_status,
    on_hold_status,
)

log = logging.getLogger("kuota.scheduler")
Raw = dict[str, Any]


class JobActions:
    """Writes for the actions of jobs and groups (see the module docstring)."""

    def __init__(
        self,
        *,
        state: ClusterState,
        writer: Writer,
        admissions: AdmissionWriter,
        clock: Callable[[], datetime],
    ) -> None:
        self.state = state
        self.writer = writer
        self.admissions = admissions
        self.clock = clock

    async def perform_group(
        self, key: str, first: Raw, workload: Raw | None, action: GroupAction
    ) -> bool:
        """A group's own actions here; the rest as for any job (``first`` stands for it)."""
        match action:
            case StartPods():
                for old, new in action.pods:
                    self.state.remember(await self.writer.patch_job(old, new))
                    self._count_gates(old, new, workload, group=True)
                    self._event(old, "Started", f"Admitted by clusterQueue {action.cluster_queue}")
                log.info("started pod group", extra={"group": key, "pods": len(action.pods)})
            case StopPods():
                for pod in action.pods:
                    await self._stop_pod(pod, StopPod(action.reason, action.message))
            case FinalizePods():
                for old, new in action.pods:
                    self.state.remember(await self.writer.patch_job(old, new))
            case RemoveExcessPods():
                for old, new in action.pods:
                    stored = await self.writer.patch_job(old, new)
                    self.state.remember(stored)
                    if not objects.is_being_deleted(old):
                        await self.writer.delete_pod(stored)
                        self._event(old, "ExcessPodDeleted", "Excess pod deleted")
                log.info("deleted excess pods", extra={"group": key, "pods": len(action.pods)})
            case OwnWorkload() | SetWaitingForReplacement():
                if workload is None:  # the controller asks these only of a Workload
                    return False
                await self._on_group_workload(workload, action)
            case _:
                return await self.perform(key, first, workload, action)
        return True

    async def _on_group_workload(
        self, workload: Raw, action: OwnWorkload | SetWaitingForReplacement
    ) -> None:
        match action:
            case OwnWorkload():
                self.state.remember(await self.writer.update_workload(workload, action.workload))
            case SetWaitingForReplacement():
                status = condition_status(
                    workload,
                    kind=WAITING_FOR_REPLACEMENT_PODS,
                    status=action.waiting,
                    reason=action.reason,
                    message=action.message,
                    now=self.clock(),
                )
                self.state.remember(await self.writer.write_workload_status(workload, status))
            case _:
                assert_never(action)

    async def perform_replicas(self, key: str, owner: Raw, action: ReplicaAction) -> bool:
        """An action of an object whose replicas are queued as groups; True when it wrote."""
        match action:
            case CreateWorkload():
                return await self.perform(key, owner, None, action)
            case ReplaceWorkload():
                name = objects.key(action.workload)
                self.state.remember(
                    await self.writer.update_workload(action.workload, action.updated)
                )
                self.state.forget(name)  # queued again as it now is
                self._event(
                    owner, "UpdatedWorkload", f"Updated Workload {name}: {action.difference}"
                )
            case RemoveWorkload():
                name = objects.key(action.workload)
                await self.writer.delete_workload(action.workload)
                self.state.on_kueue(Event("DELETED", action.workload, name))
                self._event(owner, "DeletedWorkload", f"Deleted Workload {name}: no such replica")
            case PlacePods():
                for old, new in action.pods:
                    self.state.remember(await self.writer.patch_job(old, new))
                    self.state.pods.placed(key, old)
                log.info("placed pods in their groups", extra={"pods": len(action.pods)})
            case HoldWorkload():
                # The quota goes back as soon as the engine sees the status without it.
                status = on_hold_status(action.workload, action.message, self.clock())
                await self._rewrite_status(action.workload, status)
                log.info("workload put on hold", extra={"why": action.message})
            case ReleaseHold():
                await self._rewrite_status(
                    action.workload, off_hold_status(action.workload, self.clock())
                )
                log.info("workload no longer on hold")
            case _:
                assert_never(action)
        return True

    async def _rewrite_status(self, workload: Raw, status: Raw) -> None:
        """Write a status the engine did not decide; the engine takes the Workload as stored."""
        self.state.remember(await self.writer.write_workload_status(workload, status))
        self.state.forget(objects.key(workload))

    async def perform(self, key: str, job: Raw, workload: Raw | None, action: Action) -> bool:
        """Carry out ``action`` for the job decided under ``key``; True when it wrote."""
        match action:
            case CreateWorkload():
                if await self.writer.create_workload(action.workload):
                    name = objects.key(action.workload)
                    self._event(job, "CreatedWorkload", f"Created Workload: {name}")
                    if objects.generation(job) == 1:
                        RECORDER.workload_created(
                            job_kind=job_kind(job),
                            local_queue=f"{objects.namespace(action.workload) or ''}/"
                            f"{objects.workload_queue_name(action.workload)}",
                            seconds=seconds_since(objects.creation_time(job), self.clock()),
                        )
            case UpdateWorkload() | DeleteWorkload() | ReleaseWorkload() | FinishWorkload():
                if workload is None:  # the controller asks these only of a Workload
                    return False
                await self._on_workload(key, job, workload, action)
            case DeactivateWorkload():
                if workload is None:
                    return False
                reason, message = deactivation(workload)  # DeactivatedDueTo<cause> when known
                victim = objects.key(workload)
                evict = Evict(victim=victim, preemptor=None, reason=reason, message=message)
                await self.admissions.evict(evict)
            case StartJob():
                self.state.remember(await self.writer.patch_job(job, action.job))
                self._count_gates(job, action.job, workload, group=False)
                log.info(
                    "started job",
                    extra={"job": objects.key(job), "cluster_queue": action.cluster_queue},
                )
                self._event(job, "Started", f"Admitted by clusterQueue {action.cluster_queue}")
            case RestoreJob():
                await self._restore_job(job, action)
            case SuspendJob():
                self.state.remember(await self.writer.patch_job(job, action.job))
                log.info("suspended job", extra={"job": objects.key(job), "why": action.message})
                self._event(job, "Stopped", action.message)
            case StopPod():
                await self._stop_pod(job, action)
            case FinalizePod():
                self.state.remember(await self.writer.patch_job(job, action.finalized))
            case PropagateToWorkload():
                if workload is None:
                    return False
                self.state.remember(await self.writer.update_workload(workload, action.workload))
                for message in action.messages:
                    self._event(job, "UpdatedWorkload", message)
            case RetireSlice():
                await self.finish_slice(job, action.workload, action.reason, action.message)
            case ScaleDownWorkload():
                if workload is None:
                    return False
                self.state.remember(await self.writer.update_workload(workload, action.workload))
                log.info(
                    "elastic job scaled down; workload updated in place",
                    extra={"workload": objects.key(workload), "why": action.difference},
                )
            case SetReclaimablePods():
                if workload is None:
                    return False
                stored = await self.writer.write_reclaimable_pods(workload, action.pods)
                self.state.remember(stored)
                log.info(
                    "reclaimable pods written",
                    extra={"workload": objects.key(workload), "pods": dict(action.pods)},
                )
            case WaitForFlavor():
                return False
            case _:
                assert_never(action)
        return True

    async def _on_workload(
        self,
        key: str,
        job: Raw,
        workload: Raw,
        action: UpdateWorkload | DeleteWorkload | ReleaseWorkload | FinishWorkload,
    ) -> None:
        name = objects.key(workload)
        match action:
            case UpdateWorkload():
                self.state.remember(await self.writer.update_workload(workload, action.workload))
                self.state.forget(name)  # the engine queues it with the new pod sets at once
                log.info("rebuilt the workload of a changed job", extra={"why": action.difference})
                self._event(
                    job,
                    "UpdatedWorkload",
                    f"Updated not matching Workload for suspended job: {name} "
                    f"({action.difference})",
                )
            case DeleteWorkload():
                await self.writer.delete_workload(workload)
                # As the watch will say: the quota goes back now (the job has no pods), and
                # the job gets a new Workload built from it on its next turn.
                self.state.on_kueue(Event("DELETED", workload, name))
                self.state.jobs_to_decide.add(key)
                log.info("deleted the workload of a changed job", extra={"why": action.difference})
                self._event(
                    job,
                    "DeletedWorkload",
                    f"Deleted not matching Workload: {name} ({action.difference})",
                )
            case ReleaseWorkload():
                await self.admissions.release(name, workload)
            case FinishWorkload():
                await self._finish_workload(job, workload, action)
            case _:
                assert_never(action)

    async def _restore_job(self, job: Raw, action: RestoreJob) -> None:
        current = await self.writer.clear_job_start_time(job) if action.clear_start_time else job
        restored = {**action.job, "metadata": current.get("metadata", action.job.get("metadata"))}
        self.state.remember(await self.writer.patch_job(current, restored))
        log.info("stopped job, pod template restored", extra={"job": objects.key(job)})
        self._event(job, "Stopped", action.message)

    async def _stop_pod(self, pod: Raw, action: StopPod) -> None:
        now = timestamp(self.clock())
        await self.writer.stop_pod(pod, reason=action.reason, message=action.message, now=now)
        log.info("stopped pod (deleted)", extra={"pod": objects.key(pod), "why": action.message})
        self._event(pod, "Stopped", action.message)

    async def _finish_workload(self, job: Raw, workload: Raw, action: FinishWorkload) -> None:
        status = finished_status(
            workload, reason=action.reason, message=action.message, now=self.clock()
        )
        if status is None:
            return
        await self.writer.write_workload_status(workload, status)
        cluster_queue = objects.admitted_cluster_queue(workload)
        if cluster_queue:
            RECORDER.finished(queue_ref(self.state, workload, cluster_queue))
        self._event(
            job, "FinishedWorkload", f"Workload '{objects.key(workload)}' is declared finished"
        )

    async def lift_elastic_gates(self, job: Raw, pods: Sequence[Mapping[str, Any]]) -> bool:
        """Lift the elastic-job gate of ``pods`` (docs/concepts.md#elastic-jobs)."""
        for pod in pods:
            stored = await self.writer.patch_job(pod, without_elastic_gate(pod))
            self.state.pods.on_job_pod(Event("MODIFIED", stored, objects.key(stored)))
        log.info(
            "let pods of an elastic job start",
            extra={"job": objects.key(job), "pods": [objects.name(p) for p in pods]},
        )
        return True

    async def finish_slice(self, job: Raw | None, workload: Raw, reason: str, message: str) -> None:
        """Finish a workload slice of an elastic job (docs/concepts.md#elastic-jobs).

        Its quota is no longer its own: a newer slice took it over
        (``WorkloadSliceReplaced``), or the slice never got any.
        """
        status = finished_status(workload, reason=reason, message=message, now=self.clock())
        if status is None:
            return
        self.state.remember(await self.writer.write_workload_status(workload, status))
        cluster_queue = objects.admitted_cluster_queue(workload)
        if cluster_queue and reason == WORKLOAD_SLICE_REPLACED:
            RECORDER.slice_replaced(cluster_queue=cluster_queue)
        log.info(
            "finished workload slice",
            extra={"workload": objects.key(workload), "reason": reason},
        )
        self._event(workload, reason, message)
        if job is not None:
            self._event(job, "FinishedWorkload", f"Workload '{objects.key(workload)}': {reason}")

    def _count_gates(self, old: Raw, new: Raw, workload: Raw | None, *, group: bool) -> None:
        """Kueue's gate-removal latency for every kuota scheduling gate ``new`` no longer has."""
        if workload is None:
            return
        admitted = objects.condition(workload, "Admitted")
        if admitted is None or admitted.get("status") != "True":
            return
        since = objects.parse_time(admitted.get("lastTransitionTime"))
        for gate in removed_gates(old, new):
            RECORDER.gate_removed(
                gate=gate,
                cluster_queue=objects.admitted_cluster_queue(workload),
                group=group,
                seconds=seconds_since(since, self.clock()),
            )

    def _event(self, involved: Raw, reason: str, message: str) -> None:
        self.writer.event(involved, kind=job_kind(involved), reason=reason, message=message)
