"""The Job controller: for each job that changed, its next action decided and carried out.

The decision is pure and lives with the kinds (:mod:`scheduler.jobs`): the
generic :func:`~scheduler.jobs.controller.next_action` for a kind that
follows the suspend protocol, the kind's own for one that declares
:class:`~scheduler.jobs.OwnController` (a Pod), and the group decision for
the members of a group (:class:`~scheduler.jobs.PodGroups`), and the
Workloads and waiting pods of an object whose replicas are queued as groups
(:class:`~scheduler.jobs.ReplicaGroups`).  The
:class:`~scheduler.kube.job_actions.JobActions` write it.

**Conflicts recompute.**  A 409 (or a failed resourceVersion test) means the
object moved: the job is decided again from the fresh object the watch
delivers; a stale decision is never forced through.  A write that got no
answer is tried again next turn; any other failure is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any, Final

from scheduler import logs
from scheduler.api import objects
from scheduler.api.custom_labels import CopiedMetadata, copied_metadata
from scheduler.api.feature_gates import enabled
from scheduler.api.refs import ADMITTED, MANAGED_LABEL, MANAGED_LABEL_VALUE, PODS_READY
from scheduler.jobs import (
    GroupPodsReadiness,
    Integration,
    OwnController,
    PodGroups,
    PodsReadiness,
    ReplicaGroups,
    ResolvedThroughReference,
    ScaledThroughChild,
    capability,
    for_object,
    registry,
)
from scheduler.jobs.actions import WaitForFlavor
from scheduler.jobs.controller import next_action
from scheduler.jobs.elastic import Slices, pods_to_ungate
from scheduler.jobs.managed_namespaces import ManagedNamespaces, is_managed_namespace
from scheduler.jobs.replica_groups import next_replica_actions
from scheduler.kube.background import BackgroundWrites
from scheduler.kube.job_actions import JobActions
from scheduler.kube.kueue_metrics import RECORDER, queue_ref, queued_since, seconds_since
from scheduler.kube.rest import Conflict, NotFound, RestError, Unreachable
from scheduler.kube.state import ClusterState
from scheduler.status.pods_ready import STARTED, pods_ready_status

log = logging.getLogger("kuota.scheduler")
REFERENCE_NOT_FOUND: Final = "ReferenceNotFound"
"""The Warning Event on a job whose pod sets come from an object that is not there."""


class JobReconciler:
    """Decides the jobs the state marked and has their actions carried out."""

    def __init__(
        self,
        *,
        state: ClusterState,
        actions: JobActions,
        background: BackgroundWrites,
        pods_ready: bool = False,
    ) -> None:
        self.state = state
        self.actions = actions
        self.background = background
        self.pods_ready = pods_ready
        """waitForPodsReady is on: the Workloads of running jobs get ``PodsReady``."""
        self.managed_namespaces = ManagedNamespaces.from_configuration(state.engine.config)
        """Which namespaces' jobs are kuota's (docs/concepts.md)."""

    def copied(self) -> CopiedMetadata:
        """The job labels and annotations a new Workload carries (docs/metrics.md#custom-labels)."""
        return copied_metadata(self.state.engine.config)

    def elastic_jobs(self) -> bool:
        """The gate ``ElasticJobsViaWorkloadSlices`` (docs/concepts.md#elastic-jobs)."""
        return enabled(self.state.engine.config.feature_gates, "ElasticJobsViaWorkloadSlices")

    async def reconcile_jobs(self) -> bool:
        """Decide again for every job that changed; True when any action was carried out."""
        keys = sorted(self.state.jobs_to_decide.take())
        return any(await self.background.bounded(self.reconcile_job(key) for key in keys))

    async def reconcile_job(self, key: str) -> bool:
        """The next action for one job or group, carried out; True when it wrote something."""
        job = self.state.job(key)
        if job is None:
            return await self._reconcile_group(key)
        if not self._managed_namespace(job):
            # Not kuota's: no Workload, no suspension (docs/concepts.md#managed-namespaces).
            self.state.settings.left_alone(objects.namespace(job) or "", key)
            return False
        integration = for_object(job)
        if integration is None:
            return await self._reconcile_replicas(key, job)
        if self.state.managed_owner(key) is not None:
            return False  # its queued owner has the Workload; the child is the owner's business
        resolved = self._resolved(job, integration)
        if resolved is None:
            return False  # its pod sets cannot be known yet; an Event says why
        job = self._as_scaled(key, resolved, integration)
        workload = self.state.workload_for(key)
        readiness = capability(integration, PodsReadiness)
        if (
            workload is not None
            and readiness is not None
            and not integration.finished(job).finished
        ):
            workload = await self._sync_pods_ready(key, workload, readiness.pods_ready(job))
            if workload is None:
                return False
        lifted = await self._lift_elastic_gates(key, job, workload)
        own = capability(integration, OwnController)
        flavors, classes = self.state.settings.flavor_placements(), self.state.settings.classes()
        copied = self.copied()
        if own is not None:
            action = own.next_action(
                job, workload, flavors=flavors, priority_classes=classes, copied=copied
            )
        else:
            live = self.state.pods.live_pods(key)
            stranded = self.state.pods.stranded_pods(key, self.state.topology.has_node)
            slices = (
                self.state.slices_for(key)
                if not objects.prebuilt_workload_name(job)
                else Slices(workload)
            )
            action = next_action(
                job,
                workload,
                flavors=flavors,
                priority_classes=classes,
                live_pods=live,
                stranded_pods=stranded,
                copied=copied,
                elastic_jobs=self.elastic_jobs(),
                pending_slice=slices.pending,
                stale_slices=slices.stale,
            )
        if action is None or isinstance(action, WaitForFlavor):
            return lifted
        return await self._carry_out(
            self.actions.perform(key, job, workload, action),
            key=key,
            what="job",
            subject={"job": objects.key(job)},
            action=type(action).__name__,
        )

    def _resolved(self, job: dict[str, Any], integration: Integration) -> dict[str, Any] | None:
        """The job with the object it names for its pod sets (a TrainJob's runtime), as is
        for a kind that names none; None when that object is not there (not decided)."""
        resolver = capability(integration, ResolvedThroughReference)
        if resolver is None:
            return job
        reference = resolver.reference(job)
        referenced = self.state.references.get(reference) if reference is not None else None
        if referenced is not None:
            return resolver.resolved(job, referenced)
        what = (
            f"{reference.kind} {reference.name}"
            + (f" in namespace {reference.namespace}" if reference.namespace else "")
            if reference is not None
            else "no object kuota can read"
        )
        message = (
            f"waits for {what}: its pod sets come from it, so it is not queued before it exists"
        )
        log.warning(
            "job refers to an object that is not there",
            extra={"job": objects.key(job), "reason": REFERENCE_NOT_FOUND, "detail": message},
        )
        self.actions.writer.event(
            job,
            kind=integration.kind,
            reason=REFERENCE_NOT_FOUND,
            message=message,
            event_type="Warning",
        )
        return None

    def _as_scaled(self, key: str, job: dict[str, Any], integration: Integration) -> dict[str, Any]:
        """The job as its scaling child counts it (an autoscaled elastic RayJob), else as is."""
        scaled = capability(integration, ScaledThroughChild)
        if scaled is None or not self.elastic_jobs():
            return job
        name = scaled.scaling_child(job)
        child = self.state.children.named(key, name) if name else None
        return scaled.as_scaled(job, child) if child is not None else job

    async def _reconcile_replicas(self, key: str, obj: dict[str, Any]) -> bool:
        """An object of a kind with replica groups: its Workloads, then its waiting pods."""
        kind = registry.integration_for(obj)
        replicas = capability(kind, ReplicaGroups) if kind is not None else None
        if replicas is None:
            return False
        config = self.state.engine.config
        actions = next_replica_actions(
            replicas,
            obj,
            self.state.owned_workloads(key),
            self.state.pods.unplaced_pods(key),
            priority_classes=self.state.settings.classes(),
            without_queue_name=bool(config and config.manage_jobs_without_queue_name),
        )
        done = False
        for action in actions:
            done |= await self._carry_out(
                self.actions.perform_replicas(key, obj, action),
                key=key,
                what="replicas",
                subject={"job": objects.key(obj)},
                action=type(action).__name__,
            )
        return done

    async def _reconcile_group(self, key: str) -> bool:
        members = self.state.group(key)
        if not members:
            return False
        integration = registry.integration_for(members[0])
        groups = capability(integration, PodGroups) if integration is not None else None
        if groups is None:
            return False
        workload = self.state.workload_for(key)
        readiness = capability(integration, GroupPodsReadiness) if integration else None
        if workload is not None and readiness is not None:
            workload = await self._sync_pods_ready(
                key, workload, readiness.group_pods_ready(members)
            )
            if workload is None:
                return False
        action = groups.next_group_action(
            members,
            workload,
            flavors=self.state.settings.flavor_placements(),
            priority_classes=self.state.settings.classes(),
            copied=self.copied(),
        )
        if action is None or isinstance(action, WaitForFlavor):
            return False
        return await self._carry_out(
            self.actions.perform_group(key, members[0], workload, action),
            key=key,
            what="pod group",
            subject={"group": key},
            action=type(action).__name__,
        )

    async def _sync_pods_ready(
        self, key: str, workload: dict[str, Any], ready: bool
    ) -> dict[str, Any] | None:
        """``PodsReady`` brought up to date first, as Kueue's job reconciler does
        (docs/concepts.md#pods-ready); the Workload to decide with, None when the
        write conflicted (the watch brings the fresh object, decided again)."""
        if not self.pods_ready or objects.is_finished(workload):
            return workload
        status = pods_ready_status(workload, ready, self.actions.clock())
        if status is None:
            return workload
        with logs.bind(object=objects.key(workload)):
            try:
                stored = await self.actions.writer.write_workload_status(workload, status)
            except (Conflict, NotFound):
                self.state.jobs_to_decide.add(key)
                return None
            except RestError as failure:
                self.state.jobs_to_decide.add(key)
                log.warning(
                    "could not write the PodsReady condition",
                    extra={"workload": objects.key(workload), "error": str(failure)},
                )
                return workload
        self.state.remember(stored)
        condition = objects.condition(stored, PODS_READY) or {}
        log.info(
            "PodsReady updated",
            extra={"status": condition.get("status"), "reason": condition.get("reason")},
        )
        if condition.get("status") == "True" and condition.get("reason") == STARTED:
            self._count_ready(stored, condition)
        return stored

    def _count_ready(self, workload: dict[str, Any], condition: objects.Condition) -> None:
        """Kueue's time-to-ready series, once per start (not again after a recovery)."""
        ready = objects.parse_time(condition.get("lastTransitionTime")) or self.actions.clock()
        admitted = objects.parse_time(
            (objects.condition(workload, ADMITTED) or {}).get("lastTransitionTime")
        )
        queue = queue_ref(self.state, workload, objects.admitted_cluster_queue(workload))
        RECORDER.pods_ready(
            queue,
            waited=seconds_since(queued_since(workload), self.actions.clock()),
            since_admitted=seconds_since(admitted, ready),
        )

    def _managed_namespace(self, job: dict[str, Any]) -> bool:
        """managedJobsNamespaceSelector, applied as the webhook applies it.

        An object kuota's webhook took in (labelled managed: a gated Pod) stays
        kuota's to the end, whatever its namespace became since: its gate and
        finalizer are kuota's to remove.
        """
        if objects.label(job, MANAGED_LABEL) == MANAGED_LABEL_VALUE:
            return True
        namespace = objects.namespace(job) or ""
        return is_managed_namespace(
            namespace, self.state.settings.namespace_labels(namespace), self.managed_namespaces
        )

    async def _lift_elastic_gates(
        self, key: str, job: dict[str, Any], workload: dict[str, Any] | None
    ) -> bool:
        """Let as many of an elastic job's gated pods start as its admitted slice counts."""
        gated, running = self.state.pods.elastic_pods(key)
        if workload is None or not gated:
            return False
        chosen = pods_to_ungate(workload, gated, running)
        if not chosen:
            return False
        return await self._carry_out(
            self.actions.lift_elastic_gates(job, chosen),
            key=key,
            what="job",
            subject={"job": objects.key(job)},
            action="LiftElasticGates",
        )

    async def _carry_out(
        self,
        performing: Awaitable[bool],
        *,
        key: str,
        what: str,
        subject: dict[str, str],
        action: str,
    ) -> bool:
        """Await one action; a failed one is decided again later, never raised."""
        with logs.bind(object=next(iter(subject.values()))):
            try:
                return await performing
            except (Conflict, NotFound):
                self.state.jobs_to_decide.add(key)  # from the fresh object the watch delivers
                return False
            except Unreachable as failure:
                self.state.jobs_to_decide.add(key)  # next turn (the loop backs off meanwhile)
                log.warning(
                    f"{what} action got no answer; will retry",
                    extra={**subject, "action": action, "error": str(failure)},
                )
                return False
            except RestError as failure:
                log.warning(
                    f"{what} action failed",
                    extra={**subject, "action": action, "error": str(failure)},
                )
                return False
