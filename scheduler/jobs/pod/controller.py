"""What a queued plain Pod needs next, decided from the Pod and its Workload (pure).

The counterpart of :func:`scheduler.jobs.controller.next_action` for Kueue's
``pod`` framework, with the same actions plus two a Pod needs:

- a managed Pod without a Workload gets one (``pod-<name>-<hash>``);
- an admitted Workload whose Pod is still gated gets the Pod started: one
  patch, the gate off plus the flavor's node labels and tolerations;
- an evicted (or preempted) Workload whose Pod runs stops it: the Pod gets
  Kueue's ``TerminationTarget`` condition and is deleted
  (:class:`StopPod`); a Pod that never started (still gated) gives its quota
  back at once and waits, gated, for a new admission;
- a running Pod without an admission (its quota was released) is stopped
  the same way;
- a finished Pod marks its Workload ``Finished``;
- kuota's finalizer ``kueue.x-k8s.io/managed`` comes off (:class:`FinalizePod`)
  once the Pod's end is accounted for: its Workload finished, or the Pod is
  being deleted (its Workload, owned by the Pod, goes with it, and so does
  its quota).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.api import objects
from scheduler.api.custom_labels import NOTHING_COPIED, CopiedMetadata
from scheduler.api.refs import EVICTED, POD_GROUP_NAME_LABEL
from scheduler.jobs.actions import (
    Action,
    CreateWorkload,
    DeactivateWorkload,
    FinalizePod,
    FinishWorkload,
    ReleaseWorkload,
    StartJob,
    StopPod,
    UpdateWorkload,
    WaitForFlavor,
)
from scheduler.jobs.pod.pods import (
    MAIN_POD_SET,
    has_finalizer,
    is_gated,
    is_managed,
    pod_finished,
    pod_set,
    started,
    without_finalizer,
)
from scheduler.jobs.protocol import PodSetInfo
from scheduler.jobs.start_placement import FlavorPlacement, placement
from scheduler.jobs.workload_from_job import PriorityClasses, workload_from_job

NOT_ADMITTED = "Not admitted by cluster queue"


def pod_sets(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A single Pod's one pod set ``main``: its spec as it is, metadata left out: pure.

    Its ``topologyRequest`` comes from the Pod's own annotations, its pods
    numbered by ``kueue.x-k8s.io/pod-group-pod-index``, as Kueue builds it
    (docs/concepts.md#topology-aware-scheduling).
    """
    return [pod_set(pod, MAIN_POD_SET, 1)]


def run_with(pod: Mapping[str, Any], infos: Sequence[PodSetInfo]) -> dict[str, Any]:
    """The Pod ungated and steered to its admitted flavor (and topology): pure."""
    return started(pod, next((item for item in infos if item.name == MAIN_POD_SET), None))


def _finalize(pod: Mapping[str, Any]) -> Action | None:
    return FinalizePod(without_finalizer(pod)) if has_finalizer(pod) else None


def next_pod_action(
    pod: Mapping[str, Any],
    workload: Mapping[str, Any] | None,
    *,
    flavors: Mapping[str, FlavorPlacement],
    priority_classes: PriorityClasses | None = None,
    copied: CopiedMetadata = NOTHING_COPIED,
) -> Action | None:
    """The one thing to do for a single plain ``pod`` now, or None (pure).

    ``copied``: the pod labels and annotations its Workload carries.
    """
    queue = objects.queue_name(pod) or ""
    if not is_managed(pod) or objects.label(pod, POD_GROUP_NAME_LABEL):
        return None  # not ours, or a pod of a group (scheduler.jobs.pod.group decides)
    # A managed Pod without a queue name (manageJobsWithoutQueueName) gets a Workload that
    # names no queue: it waits, unqueued, until the Pod is given one.
    if objects.is_being_deleted(pod):
        return _finalize(pod)
    finished = pod_finished(pod)
    if finished.finished:
        if workload is not None and not objects.is_finished(workload):
            return FinishWorkload(finished.reason, finished.message)
        return _finalize(pod)
    if workload is None:
        return CreateWorkload(
            workload_from_job(
                pod,
                priority_classes=priority_classes,
                pod_sets=pod_sets(pod),
                copied=copied,
            )
        )
    if objects.is_finished(workload):
        return _finalize(pod)
    holds_quota = objects.has_quota_reservation(workload)
    evicting = objects.is_evicting(workload)
    if objects.is_deactivated(workload) and holds_quota and not evicting:
        return DeactivateWorkload()
    if evicting:
        if is_gated(pod):
            return ReleaseWorkload()  # never started: nothing to stop, it waits again
        evicted = objects.condition(workload, EVICTED) or {}
        reason = f"WorkloadEvictedDueTo{evicted.get('reason') or 'Evicted'}"
        return StopPod(reason, str(evicted.get("message", "")))
    if holds_quota:
        if not is_gated(pod):
            return None  # running as admitted
        infos = placement(workload, flavors, queue)
        if isinstance(infos, WaitForFlavor):
            return infos
        return StartJob(run_with(pod, infos), objects.admitted_cluster_queue(workload))
    if not is_gated(pod):
        return StopPod("NotAdmitted", NOT_ADMITTED)
    if objects.spec(workload).get("queueName", "") != queue:
        # The Pod was given a queue (or another one) while it waits: its Workload follows.
        spec = (
            {**objects.spec(workload), "queueName": queue}
            if queue
            else {k: v for k, v in objects.spec(workload).items() if k != "queueName"}
        )
        return UpdateWorkload({**dict(workload), "spec": spec}, "queue name changed")
    return None
