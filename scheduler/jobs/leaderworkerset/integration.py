"""The ``leaderworkerset.x-k8s.io/leaderworkerset`` integration: LeaderWorkerSets.

A LeaderWorkerSet is never suspended: its controller keeps its groups of
pods running.  As Kueue does, kuota queues each group (replica) as a pod
group with a Workload of its own (docs/concepts.md#leaderworkersets):

- the webhook marks both pod templates of a queued LeaderWorkerSet on create
  and update (:meth:`LeaderWorkerSet.propagate`): its queue name and
  WorkloadPriorityClass as pod labels, and the annotations
  ``kueue.x-k8s.io/pod-suspending-parent`` (this framework) and
  ``kueue.x-k8s.io/pod-group-serving`` (a group never finishes), so that the
  pod webhook gates every pod its controller makes;
- the scheduler makes one Workload per group from the LeaderWorkerSet's spec
  and puts each gated pod into its group (:mod:`.replicas`); the pod groups
  do the rest (admission all at once, start, stop on eviction, the group's
  quota given back once its pods have gone);
- the validating webhook applies the rules of Kueue's LeaderWorkerSet
  webhook (:mod:`.validation`).

Deleting the LeaderWorkerSet deletes its Workloads with it (owner
references); scaling it down deletes the Workloads of the groups that went.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.api.refs import (
    MANAGED_LABEL,
    POD_GROUP_SERVING_ANNOTATION,
    POD_SUSPENDING_PARENT_ANNOTATION,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
)
from scheduler.jobs import pod_template
from scheduler.jobs.leaderworkerset import replicas
from scheduler.jobs.leaderworkerset.validation import validate_leaderworkerset
from scheduler.jobs.protocol import AdmissionFacts, ApiAccess, RawObject
from scheduler.jobs.workload_from_job import PriorityClasses

_mapping = pod_template.mapping


def _mark(template: dict[str, Any], lws: Mapping[str, Any]) -> None:
    """Mark one pod template of a queued LeaderWorkerSet (in place)."""
    metadata = template.setdefault("metadata", {})
    labels = dict(_mapping(metadata.get("labels")))
    queue = objects.queue_name(lws)
    if queue:
        labels[QUEUE_NAME_LABEL] = queue
    priority_class = objects.label(lws, PRIORITY_CLASS_LABEL)
    if priority_class:
        labels[PRIORITY_CLASS_LABEL] = priority_class
    if labels:
        metadata["labels"] = labels
    metadata["annotations"] = {
        **_mapping(metadata.get("annotations")),
        POD_SUSPENDING_PARENT_ANNOTATION: replicas.FRAMEWORK,
        POD_GROUP_SERVING_ANNOTATION: "true",
    }


def propagate(lws: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a queued LeaderWorkerSet with its pod templates marked: pure."""
    result = copy.deepcopy(dict(lws))
    template = result.get("spec", {}).get("leaderWorkerTemplate")
    if not isinstance(template, dict):
        return result
    for name in ("leaderTemplate", "workerTemplate"):
        pods = template.get(name)
        if isinstance(pods, dict):
            _mark(pods, lws)
    return result


class LeaderWorkerSet:
    """The ``leaderworkerset.x-k8s.io/leaderworkerset`` integration (every method pure)."""

    framework = replicas.FRAMEWORK
    api_version = replicas.API_VERSION
    kind = replicas.KIND
    group = replicas.GROUP
    resource = "leaderworkersets"
    access = ApiAccess(
        # Watch LeaderWorkerSets (their Workloads are made from them), and their gated
        # pods, which are labelled into their group (pods: the pod integration's rights).
        scheduler={"leaderworkersets": ("list", "watch")},
    )
    unplaced_pod_selector = f"{replicas.NAME_LABEL},{QUEUE_NAME_LABEL},!{MANAGED_LABEL}"
    unqueued_pod_selector = None

    # -- QueuedThroughPods: the webhook marks the pod templates ------------------------------

    def propagate(self, obj: RawObject) -> dict[str, Any]:
        return propagate(obj)

    # -- ReplicaGroups: the scheduler's part -----------------------------------------------

    def queued(self, obj: RawObject, *, without_queue_name: bool) -> bool:
        return bool(objects.queue_name(obj))  # one naming no queue is never queued

    def owner_of_pod(self, pod: RawObject) -> str | None:
        return replicas.owner_of_pod(pod)

    def replica_workloads(
        self, obj: RawObject, *, priority_classes: PriorityClasses | None = None
    ) -> dict[str, dict[str, Any]]:
        return replicas.replica_workloads(obj, priority_classes=priority_classes)

    def place_pod(self, obj: RawObject, pod: RawObject) -> dict[str, Any] | None:
        return replicas.place_pod(obj, pod)

    # -- AdmissionRules ---------------------------------------------------------------------

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        return validate_leaderworkerset(job)

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return validate_leaderworkerset(job, old, managed=facts.managed)


LEADER_WORKER_SET: Final = LeaderWorkerSet()
