"""The ``ray.io/raycluster`` integration: KubeRay's RayClusters (``ray.io/v1``).

A queued RayCluster is created suspended (``spec.suspend``), admitted as one
Workload with the pod sets of its cluster spec (:mod:`.cluster_spec`: the
head, then each worker group), started with each group's pod template
steered to its flavor, and suspended and restored on eviction; KubeRay then
deletes its pods.  A RayCluster never finishes: its quota goes back when it
is deleted (or suspended by its user).  It runs something while KubeRay
reports it ``ready``.  A RayCluster made by a queued RayJob or RayService
(whose labels it carries) is left to its owner, which is queued instead.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError, FieldPath
from scheduler.jobs import pod_template
from scheduler.jobs.multikueue_copy import CopiedWhole, field_set
from scheduler.jobs.protocol import (
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    PodSetInfo,
    RawObject,
)
from scheduler.jobs.raycluster import cluster_spec
from scheduler.jobs.raycluster.validation import RayAdmission, cluster_rules
from scheduler.jobs.spec_suspend import SuspendedBySpec, unsuspended

RAYCLUSTER_FRAMEWORK: Final = "ray.io/raycluster"
SPEC = FieldPath(("spec",))

_mapping = pod_template.mapping


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(obj.get("spec"))


def is_suspended(cluster: Mapping[str, Any]) -> bool:
    return _spec(cluster).get("suspend") is True


_RULES = cluster_rules(lambda obj: _spec(obj), SPEC)


class RayCluster(SuspendedBySpec, RayAdmission, CopiedWhole):
    """The ``ray.io/raycluster`` integration (every method pure)."""

    framework = RAYCLUSTER_FRAMEWORK
    api_version = "ray.io/v1"
    kind = "RayCluster"
    group = "ray.io"
    resource = "rayclusters"
    access = ApiAccess(
        scheduler={"rayclusters": ("list", "watch", "patch")},
        multikueue={"rayclusters": ("get",), "rayclusters/status": ("patch",)},
    )

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        """``suspended`` once the copy is gone, as KubeRay says of a suspended cluster."""
        return field_set(status, "state", "suspended", lambda seen: seen == "ready")

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        return cluster_spec.pod_sets(_spec(job), objects.annotations(job))

    def is_suspended(self, job: RawObject) -> bool:
        return is_suspended(job)

    def kind_rules(
        self, job: Mapping[str, Any], errors: list[FieldError], facts: AdmissionFacts
    ) -> None:
        _RULES(job, errors, facts)

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        result, spec = unsuspended(job)
        cluster_spec.run_with(spec, pod_sets)
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        cluster_spec.restore(result.setdefault("spec", {}), pod_sets)
        return result

    def finished(self, job: RawObject) -> FinishedState:
        """A cluster never finishes (Kueue's rule): it runs until deleted or suspended."""
        return FinishedState(False)

    def active(self, job: RawObject) -> int:
        """1 while KubeRay reports the cluster ``ready`` (its pods are counted apart)."""
        return 1 if objects.status(job).get("state") == "ready" else 0

    def pods_ready(self, job: RawObject) -> bool:
        """KubeRay reports the cluster ``ready`` (Kueue's ``PodsReady`` for a RayCluster)."""
        return objects.status(job).get("state") == "ready"


RAYCLUSTER: Final = RayCluster()
