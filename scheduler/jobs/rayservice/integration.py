"""The ``ray.io/rayservice`` integration: KubeRay's RayServices (``ray.io/v1``).

A RayService serves Ray Serve applications on a Ray cluster it keeps
(``spec.rayClusterConfig``).  As Kueue does (docs/concepts.md#ray), it is
queued as that cluster: the cluster spec's pod sets
(:mod:`scheduler.jobs.raycluster.cluster_spec`), suspended through the
cluster spec (``spec.rayClusterConfig.suspend``), started with each group's
template steered to its flavor, suspended and restored on eviction.  A
RayService never finishes (it serves until deleted); it runs something
while its ``Ready`` condition is true.  The RayClusters it makes carry its
labels and are left to it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError, FieldPath
from scheduler.jobs import pod_template
from scheduler.jobs.job_rules import is_elastic
from scheduler.jobs.multikueue_copy import CopiedWhole, condition_false
from scheduler.jobs.protocol import (
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    PodSetInfo,
    RawObject,
)
from scheduler.jobs.raycluster import cluster_spec
from scheduler.jobs.raycluster.validation import RayAdmission, cluster_rules

RAYSERVICE_FRAMEWORK: Final = "ray.io/rayservice"
CLUSTER_SPEC = FieldPath(("spec", "rayClusterConfig"))

_mapping = pod_template.mapping


def _cluster(service: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_mapping(service.get("spec")).get("rayClusterConfig"))


def is_suspended(service: Mapping[str, Any]) -> bool:
    return _cluster(service).get("suspend") is True


_RULES = cluster_rules(lambda obj: _cluster(obj), CLUSTER_SPEC)


class RayService(RayAdmission, CopiedWhole):
    """The ``ray.io/rayservice`` integration (every method pure)."""

    framework = RAYSERVICE_FRAMEWORK
    api_version = "ray.io/v1"
    kind = "RayService"
    group = "ray.io"
    resource = "rayservices"
    access = ApiAccess(
        scheduler={"rayservices": ("list", "watch", "patch")},
        # The owner chain of a created RayCluster: a queued RayService's is left to it.
        webhook={"rayservices": ("get",)},
        multikueue={"rayservices": ("get",), "rayservices/status": ("patch",)},
    )

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        """``Ready`` False once the copy is gone."""
        return condition_false(status, "Ready", "Suspended")

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        return cluster_spec.pod_sets(_cluster(job), objects.annotations(job))

    def is_suspended(self, job: RawObject) -> bool:
        return is_suspended(job)

    def kind_rules(
        self, job: Mapping[str, Any], errors: list[FieldError], facts: AdmissionFacts
    ) -> None:
        _RULES(job, errors, facts)

    def scaling_child(self, job: RawObject) -> str | None:
        """The active RayCluster of an elastic, autoscaling RayService (its status says)."""
        if not (is_elastic(job) and cluster_spec.autoscales(_cluster(job))):
            return None
        active = _mapping(objects.status(job).get("activeServiceStatus"))
        name = active.get("rayClusterName")
        return name if isinstance(name, str) and name else None

    def as_scaled(self, job: RawObject, child: RawObject) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        spec = result.setdefault("spec", {})
        scaled = _mapping(child.get("spec"))
        spec["rayClusterConfig"] = cluster_spec.with_replicas_of(_cluster(job), scaled)
        return result

    def suspend(self, job: RawObject) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        result.setdefault("spec", {}).setdefault("rayClusterConfig", {})["suspend"] = True
        return result

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        cluster = result.setdefault("spec", {}).setdefault("rayClusterConfig", {})
        cluster["suspend"] = False
        cluster_spec.run_with(cluster, pod_sets)
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        cluster_spec.restore(
            result.setdefault("spec", {}).setdefault("rayClusterConfig", {}), pod_sets
        )
        return result

    def finished(self, job: RawObject) -> FinishedState:
        """A service never finishes (Kueue's rule): it serves until deleted."""
        return FinishedState(False)

    def active(self, job: RawObject) -> int:
        """1 while the RayService's ``Ready`` condition is true (its pods are counted apart)."""
        return 1 if objects.is_true(job, "Ready") else 0

    def pods_ready(self, job: RawObject) -> bool:
        """The ``Ready`` condition is true (Kueue's ``PodsReady`` for a RayService)."""
        return objects.is_true(job, "Ready")


RAYSERVICE: Final = RayService()
