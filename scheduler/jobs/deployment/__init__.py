"""Kueue's ``deployment`` framework: a queued Deployment's pods are queued one by one.

A Deployment is not suspended and has no Workload of its own.  kuota's
webhook marks its pod template on create and update (:func:`propagate`): the
annotation ``kueue.x-k8s.io/pod-suspending-parent: deployment``, the
``kueue.x-k8s.io/managed: "true"`` label and the Deployment's queue name (and
WorkloadPriorityClass) as pod labels.  Each pod the ReplicaSet makes then
reaches the pod webhook as a queued plain Pod and is gated, and becomes a
single-pod Workload (:mod:`scheduler.jobs.pod`), without kuota's finalizer,
as Kueue does for pods whose parent queued them.  A stopped (preempted) pod
is deleted and its ReplicaSet makes a new one, which queues again.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import (
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
    POD_SUSPENDING_PARENT_ANNOTATION,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
)
from scheduler.jobs import pod_template
from scheduler.jobs.protocol import ApiAccess, RawObject

DEPLOYMENT_FRAMEWORK: Final = "deployment"


_mapping = pod_template.mapping


def propagate(deployment: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a queued Deployment with its pod template marked for the pod webhook: pure."""
    result = copy.deepcopy(dict(deployment))
    template = result.setdefault("spec", {}).setdefault("template", {})
    metadata = template.setdefault("metadata", {})
    metadata["annotations"] = {
        **_mapping(metadata.get("annotations")),
        POD_SUSPENDING_PARENT_ANNOTATION: DEPLOYMENT_FRAMEWORK,
    }
    labels = {**_mapping(metadata.get("labels")), MANAGED_LABEL: MANAGED_LABEL_VALUE}
    queue = objects.queue_name(deployment)
    if queue:
        labels[QUEUE_NAME_LABEL] = queue
    priority_class = objects.label(deployment, PRIORITY_CLASS_LABEL)
    if priority_class:
        labels[PRIORITY_CLASS_LABEL] = priority_class
    metadata["labels"] = labels
    return result


class Deployment:
    """The ``deployment`` integration: queued through its pods (every method pure)."""

    framework = DEPLOYMENT_FRAMEWORK
    api_version = "apps/v1"
    kind = "Deployment"
    group = "apps"
    resource = "deployments"
    access = ApiAccess()  # only the webhook's patch of the object being admitted

    def propagate(self, obj: RawObject) -> dict[str, Any]:
        return propagate(obj)


DEPLOYMENT: Final = Deployment()

__all__ = ["DEPLOYMENT", "DEPLOYMENT_FRAMEWORK", "Deployment", "propagate"]
