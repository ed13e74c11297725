"""What a queued Job needs next, decided from the Job and its Workload (pure).

The Job controller of kuota is this one function, :func:`next_action`, plus
the executor (``scheduler.kube.executor``) that performs the action.  It
lives with the Job integrations because it is what kuota knows about a
job's life cycle (docs/architecture.md#the-jobs-layer); it reads the Workload through
``scheduler.api.objects`` and the job — a batch/v1 Job, a JobSet, any kind
with an integration folder — only through its integration
(:func:`scheduler.jobs.for_object`: suspend, run with, restore, finished,
active), so nothing here names a kind.  Keeping the decision pure means
every situation a restart can leave behind is a unit test:

- a queued Job without a Workload gets one (the name is a hash of the Job's
  UID, so a second create after a crash is a harmless "already exists"),
  unless it names a prebuilt Workload (``kueue.x-k8s.io/prebuilt-workload-name``,
  as MultiKueue's worker Jobs do): then that Workload is its Workload, and
  the Job waits suspended until it exists;
- a Workload whose status records an admission while its Job is still
  suspended gets the Job started: one patch, ``suspend: false`` plus the
  flavors' node labels (a crash between the status write and this patch is
  finished here, never repeated: a running Job needs nothing);
- a queued Job that runs without an admission (the webhook was down) is
  suspended again, unless it has already finished;
- a finished Job marks its Workload ``Finished``;
- an evicted Workload stops its Job (suspended, pod template restored to what
  the user wrote) and gives its quota back only once nothing of the job runs
  or terminates: neither its status counters nor the pods kuota sees
  (``live_pods``: every pod started from an admission carries the job's UID
  in the label ``kueue.x-k8s.io/job-uid``) say a pod is left, so the next
  admission never lands on nodes its pods still hold (docs/concepts.md,
  "Eviction and restore"); a pod being deleted on a node that no longer exists
  holds nothing and is not waited for (``stranded_pods``); a finished job's
  Workload is marked ``Finished`` on the same condition;
- a Workload that no longer describes its Job
  (:func:`scheduler.jobs.equivalence.pod_sets_difference`: count, resources,
  nodeSelector, affinity, tolerations changed) is never admitted or started as
  it is: a pending one is rebuilt in place from the Job (``UpdateWorkload``);
  one that holds quota for a Job that was suspended and edited waits until
  the Job has no pods, gets kuota's placement taken off the Job's template
  (``RestoreJob``, the user's counts kept) and is deleted (``DeleteWorkload``),
  so the Job is queued again as it now is; a running Job whose counts no
  longer match its admission (the webhook's JOB-K2 refuses that change; the
  API server refuses template changes of a running Job, so only counts are
  compared and a relabelled flavor never stops a running Job) is suspended
  first.  This is Kueue's ``ensureOneWorkload``;
- a Workload that does not carry its job's ``kueue.x-k8s.io/admission-gated-by``
  annotation or WorkloadPriorityClass (the ``kueue.x-k8s.io/priority-class``
  label changed) gets them (:class:`PropagateToWorkload`, Kueue's
  ``UpdateAdmissionGatedBy`` and ``UpdateWorkloadPriority``);
- an elastic job (annotation ``kueue.x-k8s.io/elastic-job: "true"``, gate
  ``ElasticJobsViaWorkloadSlices`` on) that runs on its admission and now
  asks for fewer pods gets its Workload's counts lowered in place
  (:class:`ScaleDownWorkload`, Kueue's ``EnsureWorkloadSlices``); the
  admission stays and the engine charges only the pods asked for, so the
  rest of the quota is free at once (docs/concepts.md#elastic-jobs);
- a job of a kind that declares :class:`~scheduler.jobs.protocol.ReclaimablePods`
  whose finished pods no longer need their quota gets its Workload's
  ``status.reclaimablePods`` written (:class:`SetReclaimablePods`; the engine
  then counts only the pods still to run, docs/concepts.md#reclaimable-pods).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.api import objects
from scheduler.api.custom_labels import NOTHING_COPIED, CopiedMetadata
from scheduler.api.refs import (
    EVICTED,
    POD_SET_LABEL,
)
from scheduler.jobs.actions import (
    Action,
    CreateWorkload,
    DeactivateWorkload,
    DeleteWorkload,
    FinishWorkload,
    ReleaseWorkload,
    RestoreJob,
    StartJob,
    SuspendJob,
    UpdateWorkload,
    WaitForFlavor,
)
from scheduler.jobs.elastic import (
    RetireSlice,
    elastic_scale_down,
    new_slice,
    pending_slice_out_of_sync,
    scaled_up,
)
from scheduler.jobs.equivalence import count_difference, pod_sets_difference
from scheduler.jobs.propagation import (
    propagation,
    reclaimable_update,
)
from scheduler.jobs.protocol import (
    JobIntegration,
    PodSetInfo,
    ReclaimablePods,
    StartTimeBlocksRestore,
)
from scheduler.jobs.registry import capability, for_object
from scheduler.jobs.start_placement import (
    FlavorPlacement,
    placement,
)
from scheduler.jobs.workload_from_job import (
    PriorityClasses,
    maximum_execution_time,
    workload_from_job,
)

NO_MATCHING_WORKLOAD = (
    "No matching Workload; restoring pod templates according to existent Workload"
)
"""Kueue's message when it stops a running Job that no longer matches its Workload."""


def workload_difference(
    job: Mapping[str, Any],
    workload: Mapping[str, Any],
    integration: JobIntegration,
    *,
    placed: list[PodSetInfo] | None = None,
) -> str | None:
    """How ``workload`` fails to describe ``job`` now, or None (Kueue's equivalence): pure.

    ``placed``: the admission's placement, for a Workload holding quota (the
    Job may then carry it).
    """
    spec = objects.spec(workload)
    recorded = [p for p in spec.get("podSets") or [] if isinstance(p, Mapping)]
    difference = pod_sets_difference(integration.pod_sets(job), recorded, placed=placed)
    if difference is not None:
        return difference
    if spec.get("maximumExecutionTimeSeconds") != maximum_execution_time(job):
        return "maximumExecutionTimeSeconds changed"
    return None


def rebuilt_workload(
    job: Mapping[str, Any],
    workload: Mapping[str, Any],
    integration: JobIntegration,
    priority_classes: PriorityClasses | None,
) -> dict[str, Any]:
    """The Workload as read, with the spec its Job asks for now (``active`` kept): pure."""
    fresh = workload_from_job(job, priority_classes=priority_classes, integration=integration)
    spec = dict(fresh["spec"])
    old_spec = objects.spec(workload)
    if "active" in old_spec:
        spec["active"] = old_spec["active"]
    return {**dict(workload), "spec": spec}


def _stop_edited(
    job: Mapping[str, Any],
    workload: Mapping[str, Any],
    integration: JobIntegration,
    infos: list[PodSetInfo],
    difference: str,
    live_pods: int,
    stranded_pods: int,
) -> Action | None:
    """The admitted Workload's suspended Job was edited: free the quota, queue it again."""
    if _still_runs(job, live_pods, stranded_pods):
        return None  # the quota stays until the Job controller has removed the pods
    recorded = [p for p in objects.spec(workload).get("podSets") or [] if isinstance(p, Mapping)]
    wanted = integration.pod_sets(job)
    counts = {str(p.get("name")): p.get("count") for p in wanted}
    same_counts = [
        {**p, "count": recorded[i].get("count"), "minCount": recorded[i].get("minCount")}
        for i, p in enumerate(wanted)
        if i < len(recorded)
    ]
    if len(same_counts) == len(recorded) and (
        pod_sets_difference(same_counts, recorded, placed=infos) is None
    ):
        # Only the counts changed; the template is the user's or kuota's running
        # form: take kuota's placement off (the new Workload must not inherit the
        # old flavor's node labels), keep the counts the user asked for.
        keep = [{**p, "count": counts.get(str(p.get("name")), p.get("count"))} for p in recorded]
        restored = integration.restore(job, keep)
        if restored.get("spec") != job.get("spec"):
            started = _start_time_blocks_restore(integration, job)
            return RestoreJob(
                restored,
                clear_start_time=started,
                message=f"The job changed while admitted ({difference}); requeueing it",
            )
    return DeleteWorkload(difference)


FAILED_TO_START = "FailedToStart"
"""The ``Finished`` reason of a Workload whose Job cannot be started as admitted.

See docs/concepts.md#how-a-job-is-suspended-admitted-and-started.
"""


def selector_conflict(pod_sets: list[dict[str, Any]], infos: list[PodSetInfo]) -> str | None:
    """Kueue's message when a pod set's nodeSelector sets a flavor label otherwise: pure.

    Starting the Job would have to keep the user's value (and run on nodes of
    a flavor that was not charged) or drop it: the failure is permanent instead
    (the Workload finishes as ``FailedToStart``, the Job stays suspended; see
    docs/concepts.md#how-a-job-is-suspended-admitted-and-started).  Flavor
    assignment never picks such a flavor for the Workload's own nodeSelector
    (docs/scheduling.md#flavor-eligibility), and a Job whose nodeSelector changed
    has its Workload rebuilt first, so this remains for a flavor whose
    ``nodeLabels`` changed after the admission.
    """
    by_name = {str(p.get("name")): p for p in pod_sets}
    for info in infos:
        template = by_name.get(info.name, {}).get("template")
        spec = template.get("spec") if isinstance(template, Mapping) else None
        selector = spec.get("nodeSelector") if isinstance(spec, Mapping) else None
        if not isinstance(selector, Mapping):
            continue
        for key in sorted(info.node_selector):
            if key in selector and selector[key] != info.node_selector[key]:
                return (
                    "invalid admission check PodSetUpdate: conflict for nodeSelector: "
                    f"conflict for key={key}, value1={selector[key]}, "
                    f"value2={info.node_selector[key]}"
                )
    return None


def _in_running_form(pod_sets: list[dict[str, Any]]) -> bool:
    """Whether a pod template still carries the admission's pod-set label: pure.

    kuota puts it there when it starts a job and restoring takes it off, so a
    suspended job with it was stopped and not yet restored.
    """
    for pod_set in pod_sets:
        template = pod_set.get("template")
        metadata = template.get("metadata") if isinstance(template, Mapping) else None
        labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
        if isinstance(labels, Mapping) and POD_SET_LABEL in labels:
            return True
    return False


def _start_time_blocks_restore(integration: JobIntegration, job: Mapping[str, Any]) -> bool:
    """The kind's start time must be cleared before its template is restored (a batch Job)."""
    guarded = capability(integration, StartTimeBlocksRestore)
    return guarded is not None and guarded.start_time_blocks_restore(job)


def _active_pods(job: Mapping[str, Any]) -> int:
    """What the job still runs (a Job's pods, a JobSet's child Jobs): "not stopped yet"."""
    integration = for_object(job)
    return integration.active(job) if integration is not None else 0


def _still_runs(job: Mapping[str, Any], live_pods: int, stranded_pods: int) -> bool:
    """Something of the job has not stopped, by its status or the pods seen, apart from the
    ``stranded_pods`` (being deleted on a node that is gone, counted in both): pure."""
    return _active_pods(job) > stranded_pods or live_pods > stranded_pods


def next_action(
    job: Mapping[str, Any],
    workload: Mapping[str, Any] | None,
    *,
    flavors: Mapping[str, FlavorPlacement],
    priority_classes: PriorityClasses | None = None,
    live_pods: int = 0,
    stranded_pods: int = 0,
    copied: CopiedMetadata = NOTHING_COPIED,
    elastic_jobs: bool = True,
    pending_slice: Mapping[str, Any] | None = None,
    stale_slices: Sequence[tuple[Mapping[str, Any], str, str]] = (),
) -> Action | None:
    """The one thing to do for ``job`` now, or None when it is where it should be (pure).

    ``live_pods``: the pods of the job the caller sees that have not
    terminated (running, or in their termination grace period);
    ``stranded_pods``: those of them being deleted on a node that no longer
    exists (no kubelet will end them; they hold no node).
    ``copied``: the job's labels and annotations its Workload carries when it
    is made (``integrations.labelKeysToCopy`` and the Workload custom metric
    labels).  ``elastic_jobs``: the gate ``ElasticJobsViaWorkloadSlices``
    (docs/concepts.md#elastic-jobs);
    ``pending_slice`` and ``stale_slices``: what
    :func:`scheduler.jobs.elastic.choose_slices` found besides ``workload``.
    """
    integration: JobIntegration | None = for_object(job)
    if integration is None:
        return None
    queue = integration.queue_name(job)
    if not queue or objects.is_being_deleted(job):
        return None
    finished = integration.finished(job)
    if workload is None:
        if finished.finished:
            return None
        if objects.prebuilt_workload_name(job):
            # Kueue's prebuilt workloads: the Job waits, suspended, for the Workload it
            # names (MultiKueue creates that first); none is ever made for it.
            if not integration.is_suspended(job):
                return SuspendJob(integration.suspend(job), "Not admitted by cluster queue")
            return None
        if not integration.is_suspended(job):
            return SuspendJob(integration.suspend(job), "Not admitted by cluster queue")
        return CreateWorkload(
            workload_from_job(
                job,
                priority_classes=priority_classes,
                integration=integration,
                copied=copied,
                elastic_jobs=elastic_jobs,
            )
        )
    if finished.finished:
        if objects.is_finished(workload) or live_pods > stranded_pods:
            return None  # finished once its last pod has stopped
        return FinishWorkload(finished.reason, finished.message)
    if stale_slices:
        stale, reason, message = stale_slices[0]
        return RetireSlice(dict(stale), reason, message)
    if objects.is_finished(workload):
        return None
    retired = pending_slice_out_of_sync(job, workload, pending_slice, integration)
    if retired is not None:
        return retired
    propagate = propagation(job, workload, priority_classes)
    if propagate is not None:
        return propagate
    reclaims = capability(integration, ReclaimablePods)
    if reclaims is not None:
        reclaim = reclaimable_update(workload, reclaims.reclaimable_pods(job))
        if reclaim is not None:
            return reclaim
    holds_quota = objects.has_quota_reservation(workload)
    evicting = objects.is_evicting(workload)
    if objects.is_deactivated(workload) and holds_quota and not evicting:
        return DeactivateWorkload()
    if evicting:
        evicted = objects.condition(workload, EVICTED) or {}
        pod_sets = objects.spec(workload).get("podSets") or []
        message = str(evicted.get("message", ""))
        if not integration.is_suspended(job):
            return SuspendJob(integration.suspend(job), message)
        restored = integration.restore(job, pod_sets)
        if restored.get("spec") != job.get("spec"):
            started = _start_time_blocks_restore(integration, job)
            return RestoreJob(restored, clear_start_time=started, message=message)
        if _still_runs(job, live_pods, stranded_pods):
            return None  # wait until every pod of the job has stopped
        return ReleaseWorkload()
    if holds_quota and objects.awaits_admission_checks(workload):
        # Quota reserved, admission checks not all Ready: the Job waits.
        if not integration.is_suspended(job):
            return SuspendJob(integration.suspend(job), "Not admitted by cluster queue")
        return None
    if holds_quota:
        if not integration.is_suspended(job):
            recorded = [
                p for p in objects.spec(workload).get("podSets") or [] if isinstance(p, Mapping)
            ]
            admitted = [
                PodSetInfo(name=str(a.get("name", "main")), count=int(a.get("count") or 0))
                for a in objects.pod_set_assignments(workload)
            ]
            if count_difference(integration.pod_sets(job), recorded, admitted) is None:
                return None
            if elastic_jobs:
                scale_down = elastic_scale_down(job, workload, integration)
                if scale_down is not None:
                    return scale_down
                if scaled_up(job, workload, integration):
                    if pending_slice is not None:
                        return None  # the new slice waits for its admission
                    fresh = workload_from_job(
                        job,
                        priority_classes=priority_classes,
                        integration=integration,
                        copied=copied,
                        elastic_jobs=True,
                    )
                    return CreateWorkload(new_slice(job, workload, fresh))
            return SuspendJob(integration.suspend(job), NO_MATCHING_WORKLOAD)
        infos = placement(workload, flavors, queue, job_uid=objects.uid(job))
        if isinstance(infos, WaitForFlavor):
            return infos
        difference = workload_difference(job, workload, integration, placed=infos)
        if difference is not None and elastic_jobs:
            # Not started yet, scaled down: the admission stands for fewer pods.
            scale_down = elastic_scale_down(job, workload, integration)
            if scale_down is not None:
                return scale_down
        if difference is not None:
            return _stop_edited(
                job, workload, integration, infos, difference, live_pods, stranded_pods
            )
        conflict = selector_conflict(integration.pod_sets(job), infos)
        if conflict is not None:
            return FinishWorkload(FAILED_TO_START, conflict)
        cluster_queue = objects.admitted_cluster_queue(workload)
        return StartJob(integration.run_with(job, infos), cluster_queue)
    if not integration.is_suspended(job):
        return SuspendJob(integration.suspend(job), "Not admitted by cluster queue")
    if _in_running_form(integration.pod_sets(job)):
        # Stopped without its reservation (released before the Job stopped, e.g.
        # deactivated): what the admission added, a partial admission's cut
        # parallelism included, goes before the Job is compared with its Workload,
        # as Kueue's stopJob restores the pod sets of the Workload.
        restored = integration.restore(job, objects.spec(workload).get("podSets") or [])
        if restored.get("spec") != job.get("spec"):
            started = _start_time_blocks_restore(integration, job)
            return RestoreJob(
                restored, clear_start_time=started, message="Not admitted by cluster queue"
            )
    difference = workload_difference(job, workload, integration)
    if difference is None and objects.spec(workload).get("queueName") != queue:
        difference = "queue name changed"  # Kueue's handleQueueNameChange, while suspended
    if difference is not None:
        return UpdateWorkload(
            rebuilt_workload(job, workload, integration, priority_classes), difference
        )
    return None
