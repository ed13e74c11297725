"""The ``pod`` integration: Kueue's pod framework (plain Pods and pod groups).

The class ties together the single-Pod rules (:mod:`.pods`), the single-Pod
controller decision (:mod:`.controller`) and the pod groups (:mod:`.group`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.custom_labels import NOTHING_COPIED, CopiedMetadata
from scheduler.api.refs import MANAGED_LABEL, MANAGED_LABEL_VALUE
from scheduler.jobs.actions import Action, GroupAction
from scheduler.jobs.pod.controller import next_pod_action, pod_sets, run_with
from scheduler.jobs.pod.group import (
    group_key_of_pod,
    group_key_of_workload,
    next_group_action,
    total_count,
)
from scheduler.jobs.pod.pods import (
    gate_on_create,
    is_gated,
    is_ready,
    is_terminated,
    pod_finished,
)
from scheduler.jobs.protocol import ApiAccess, FinishedState, PodSetInfo, RawObject
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.jobs.workload_from_job import PriorityClasses

POD_FRAMEWORK: Final = "pod"
MANAGED_POD_SELECTOR: Final = f"{MANAGED_LABEL}={MANAGED_LABEL_VALUE}"
"""The only Pods the scheduler lists and watches: those kuota's webhook took in."""


class Pod:
    """The ``pod`` integration: plain Pods, one by one and in groups (every method pure).

    A queued plain Pod is one pod set ``main`` of one pod whose template is
    the Pod's own spec (Kueue copies the spec as it is, metadata left out).
    "Suspended" means gated (or already terminated); starting it takes the
    gate off and adds the admitted flavor's node labels, tolerations and
    kuota's pod labels (the API server allows these additions on a gated
    Pod).  A Pod cannot be suspended or restored: :meth:`next_action` stops
    an evicted one by deleting it.  Pods labelled with a group name are one
    job together (:mod:`.group`).
    """

    framework = POD_FRAMEWORK
    managed_label_selector = MANAGED_POD_SELECTOR
    api_version = "v1"
    kind = "Pod"
    group = ""
    resource = "pods"
    access = ApiAccess(
        # Watch the Pods the webhook gated; ungate and steer them, take the finalizer
        # off; a stopped Pod gets TerminationTarget (pods/status), then is deleted.
        scheduler={"pods": ("list", "watch", "patch", "delete"), "pods/status": ("patch",)},
    )

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        return pod_sets(job)

    def is_suspended(self, job: RawObject) -> bool:
        return is_terminated(job) or is_gated(job)

    def suspend(self, job: RawObject) -> dict[str, Any]:
        """A Pod cannot be suspended: unchanged (the executor deletes a Pod it stops)."""
        return copy.deepcopy(dict(job))

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        return run_with(job, pod_sets)

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A started Pod cannot be changed back: unchanged (Kueue's RestorePodSetsInfo)."""
        return copy.deepcopy(dict(job))

    def finished(self, job: RawObject) -> FinishedState:
        return pod_finished(job)

    def active(self, job: RawObject) -> int:
        """1 while the Pod exists and has not terminated (a stop deletes it)."""
        return 0 if is_terminated(job) else 1

    # -- PodsReadiness -----------------------------------------------------------------------

    def pods_ready(self, job: RawObject) -> bool:
        """The Pod's ``Ready`` condition is True (Kueue's rule)."""
        return is_ready(job)

    def group_pods_ready(self, members: Sequence[RawObject]) -> bool:
        """Every pod of the group exists (the total count) and is Ready (Kueue's rule)."""
        total = total_count(members)
        if total is None or len(members) < total:
            return False
        return all(is_ready(pod) for pod in members)

    # -- GateOnCreate ---------------------------------------------------------------------

    def gate_on_create(
        self, obj: RawObject, *, without_queue_name: bool = False
    ) -> dict[str, Any] | None:
        return gate_on_create(obj, without_queue_name=without_queue_name)

    # -- OwnController: a single Pod ---------------------------------------------------------

    def next_action(
        self,
        job: RawObject,
        workload: RawObject | None,
        *,
        flavors: Mapping[str, FlavorPlacement],
        priority_classes: PriorityClasses | None = None,
        copied: CopiedMetadata = NOTHING_COPIED,
    ) -> Action | None:
        return next_pod_action(
            job,
            workload,
            flavors=flavors,
            priority_classes=priority_classes,
            copied=copied,
        )

    # -- PodGroups ---------------------------------------------------------------------------

    def group_key(self, obj: RawObject) -> str | None:
        return group_key_of_pod(obj)

    def group_key_of_workload(self, workload: RawObject) -> str | None:
        return group_key_of_workload(workload)

    def next_group_action(
        self,
        members: Sequence[RawObject],
        workload: RawObject | None,
        *,
        flavors: Mapping[str, FlavorPlacement],
        priority_classes: PriorityClasses | None = None,
        copied: CopiedMetadata = NOTHING_COPIED,
    ) -> GroupAction | None:
        return next_group_action(
            members,
            workload,
            flavors=flavors,
            priority_classes=priority_classes,
            copied=copied,
        )


POD: Final = Pod()
