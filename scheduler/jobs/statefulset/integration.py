"""The ``statefulset`` integration: a queued StatefulSet's pods form one pod group.

As Kueue v0.19 does (docs/concepts.md#statefulsets):

- the webhook marks the pod template of a queued StatefulSet on create and
  update (:func:`propagate`): its queue name and WorkloadPriorityClass as pod
  labels (so that the pod webhook sees and gates each pod) and the annotation
  ``kueue.x-k8s.io/pod-suspending-parent: statefulset`` (no finalizer: the
  StatefulSet replaces its pods).  A template marked already is kept as it
  is: a new queue name or priority class (or the first one, for a StatefulSet
  queued without a queue name) would make a new revision, which the
  StatefulSet's controller does not roll out while its pods wait gated; the
  pods get them from the scheduler instead.  Nothing in the template depends
  on the UID (unknown on create) or on ``replicas`` (scaling is no new
  revision);
- the scheduler makes the Workload from the StatefulSet once it exists, puts
  each gated pod into its group, keeps the pods' and Workload's queue name
  the StatefulSet's, and holds the Workload while it is scaled to zero
  (:mod:`.replicas`); the pod groups do the rest;
- the validating webhook applies the rules of Kueue's StatefulSet webhook
  (:mod:`.validation`).

A StatefulSet whose template names another suspending parent (a
LeaderWorkerSet's) is that framework's: left alone.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.api.refs import (
    POD_SUSPENDING_PARENT_ANNOTATION,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
)
from scheduler.jobs import pod_template
from scheduler.jobs.protocol import AdmissionFacts, ApiAccess, RawObject
from scheduler.jobs.statefulset import replicas
from scheduler.jobs.statefulset.validation import validate_statefulset
from scheduler.jobs.workload_from_job import PriorityClasses

STATEFULSET_FRAMEWORK: Final = replicas.FRAMEWORK
POD_NAME_LABEL: Final = "statefulset.kubernetes.io/pod-name"
"""Set by the StatefulSet controller on each of its pods."""

_mapping = pod_template.mapping


def propagate(statefulset: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a queued StatefulSet whose pods will be gated and queued: pure."""
    result = copy.deepcopy(dict(statefulset))
    if replicas.template_parent(statefulset) is not None:
        # Marked already (or another framework's): a changed template would be a new
        # revision, which the StatefulSet's controller does not roll out while its pods wait.
        return result
    template = result.setdefault("spec", {}).setdefault("template", {})
    metadata = template.setdefault("metadata", {})
    metadata["annotations"] = {
        **_mapping(metadata.get("annotations")),
        POD_SUSPENDING_PARENT_ANNOTATION: STATEFULSET_FRAMEWORK,
    }
    labels = dict(_mapping(metadata.get("labels")))
    queue = objects.queue_name(statefulset)
    if queue and not labels.get(QUEUE_NAME_LABEL):
        labels[QUEUE_NAME_LABEL] = queue
    priority_class = objects.label(statefulset, PRIORITY_CLASS_LABEL)
    if priority_class and not labels.get(PRIORITY_CLASS_LABEL):
        labels[PRIORITY_CLASS_LABEL] = priority_class
    if labels:
        metadata["labels"] = labels
    return result


class StatefulSet:
    """The ``statefulset`` integration (every method pure)."""

    framework = STATEFULSET_FRAMEWORK
    api_version = replicas.API_VERSION
    kind = replicas.KIND
    group = replicas.GROUP
    resource = "statefulsets"
    access = ApiAccess(
        # Watch StatefulSets (their Workloads are made from them) and their queued pods,
        # which are labelled into their group (pods: the pod integration's rights).
        scheduler={"statefulsets": ("list", "watch")},
    )
    unplaced_pod_selector = f"{POD_NAME_LABEL},{QUEUE_NAME_LABEL}"
    """Every queued pod of a StatefulSet, in its group or not: a pod in the group
    still follows its StatefulSet's queue name."""
    unqueued_pod_selector = POD_NAME_LABEL
    """With manageJobsWithoutQueueName: every pod of a StatefulSet, since one naming no
    queue is queued too."""
    hold_message = replicas.ON_HOLD_MESSAGE

    # -- QueuedThroughPods: the webhook marks the pod template -------------------------------

    def propagate(self, obj: RawObject) -> dict[str, Any]:
        return propagate(obj)

    # -- ReplicaGroups: the scheduler's part -----------------------------------------------

    def queued(self, obj: RawObject, *, without_queue_name: bool) -> bool:
        return replicas.queued(obj, without_queue_name=without_queue_name)

    def owner_of_pod(self, pod: RawObject) -> str | None:
        return replicas.owner_of_pod(pod)

    def replica_workloads(
        self, obj: RawObject, *, priority_classes: PriorityClasses | None = None
    ) -> dict[str, dict[str, Any]]:
        return replicas.replica_workloads(obj, priority_classes=priority_classes)

    def place_pod(self, obj: RawObject, pod: RawObject) -> dict[str, Any] | None:
        return replicas.place_pod(obj, pod)

    # -- HoldAtZero ---------------------------------------------------------------------------

    def should_hold(self, obj: RawObject, workload: RawObject) -> bool:
        return replicas.should_hold(obj, workload)

    def should_release_hold(self, obj: RawObject, workload: RawObject) -> bool:
        return replicas.should_release_hold(obj, workload)

    # -- AdmissionRules ---------------------------------------------------------------------

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        return validate_statefulset(job)

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return validate_statefulset(job, old, managed=facts.managed)


STATEFULSET: Final = StatefulSet()

__all__ = ["STATEFULSET", "STATEFULSET_FRAMEWORK", "StatefulSet", "propagate"]
