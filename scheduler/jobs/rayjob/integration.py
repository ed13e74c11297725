"""The ``ray.io/rayjob`` integration: KubeRay's RayJobs (``ray.io/v1``).

A RayJob runs a Ray cluster of its own (``spec.rayClusterSpec``) and submits
its entrypoint to it.  As Kueue does (docs/concepts.md#ray):

- **pod sets**: the cluster spec's (:mod:`scheduler.jobs.raycluster.cluster_spec`:
  ``head``, then each worker group), and in ``K8sJobMode`` (the default) a
  ``submitter`` pod set of one pod: ``submitterPodTemplate``, else KubeRay's
  default submitter (the head's image, 500m CPU and 200Mi requested, 1 CPU
  and 1Gi limits); in ``SidecarMode`` the head counts KubeRay's submitter
  container too;
- **suspend** is ``spec.suspend``; starting steers each template to its
  flavor, the submitter's included (a RayJob without a submitter template
  gets the default one, steered); KubeRay then makes the cluster and the
  submitter with them; a suspended RayJob's cluster is deleted by KubeRay;
- **finished** when ``status.jobDeploymentStatus`` is ``Complete`` or
  ``Failed``, succeeded when ``status.jobStatus`` is ``SUCCEEDED``; it runs
  something unless its deployment status is new or ``Suspended``;
- a RayJob that runs on an existing cluster (``clusterSelector``) is not
  queued: it gets no Workload and is not suspended (Kueue does not manage
  it either; Kueue's webhook still suspends it, kuota does not).

The RayCluster KubeRay makes for a queued RayJob carries its labels, queue
name included; it is left to the RayJob (docs/concepts.md#supported-job-kinds).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.jobs import pod_template
from scheduler.jobs.job_rules import is_elastic
from scheduler.jobs.multikueue_copy import CopiedWhole, field_set
from scheduler.jobs.protocol import (
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    PodSetInfo,
    RawObject,
    with_queue_label,
)
from scheduler.jobs.raycluster import cluster_spec
from scheduler.jobs.raycluster.validation import RayAdmission
from scheduler.jobs.spec_suspend import SuspendedBySpec, unsuspended

RAYJOB_FRAMEWORK: Final = "ray.io/rayjob"
SUBMITTER: Final = "submitter"
SUBMITTER_CONTAINER: Final = "ray-job-submitter"
K8S_JOB_MODE, SIDECAR_MODE = "K8sJobMode", "SidecarMode"
SUBMITTER_RESOURCES: Final = {
    "limits": {"cpu": "1", "memory": "1Gi"},
    "requests": {"cpu": "500m", "memory": "200Mi"},
}
"""KubeRay's resources for its default submitter (and its sidecar submitter)."""
SPEC = FieldPath(("spec",))
NOT_RUNNING: Final = ("", "Suspended")
"""Deployment statuses in which a RayJob runs nothing (new, or suspended)."""

_mapping = pod_template.mapping


def _spec(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(job.get("spec"))


def _cluster(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_spec(job).get("rayClusterSpec"))


def submission_mode(job: Mapping[str, Any]) -> str:
    """``spec.submissionMode``, KubeRay's default (``K8sJobMode``) when absent: pure."""
    mode = _spec(job).get("submissionMode")
    return mode if isinstance(mode, str) and mode else K8S_JOB_MODE


def uses_existing_cluster(job: Mapping[str, Any]) -> bool:
    selector = _spec(job).get("clusterSelector")
    return isinstance(selector, Mapping) and bool(selector)


def is_suspended(job: Mapping[str, Any]) -> bool:
    return _spec(job).get("suspend") is True


def default_submitter(job: Mapping[str, Any]) -> dict[str, Any]:
    """KubeRay's default submitter pod template: pure."""
    head = _mapping(_mapping(_cluster(job).get("headGroupSpec")).get("template"))
    containers = _mapping(head.get("spec")).get("containers")
    first = containers[0] if isinstance(containers, list) and containers else {}
    image = first.get("image", "") if isinstance(first, Mapping) else ""
    return {
        "spec": {
            "containers": [
                {
                    "name": SUBMITTER_CONTAINER,
                    "image": image,
                    "resources": copy.deepcopy(SUBMITTER_RESOURCES),
                }
            ],
            "restartPolicy": "Never",
        }
    }


def submitter_template(job: Mapping[str, Any]) -> dict[str, Any]:
    template = _spec(job).get("submitterPodTemplate")
    if isinstance(template, Mapping):
        return copy.deepcopy(dict(template))
    return default_submitter(job)


def pod_sets(job: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The cluster's pod sets, the sidecar counted in the head, then the submitter: pure."""
    sets = cluster_spec.pod_sets(_cluster(job), objects.annotations(job))
    mode = submission_mode(job)
    if mode == SIDECAR_MODE:
        head = sets[0]["template"].setdefault("spec", {}).setdefault("containers", [])
        head.append({"name": SUBMITTER_CONTAINER, "resources": copy.deepcopy(SUBMITTER_RESOURCES)})
    if mode == K8S_JOB_MODE:
        sets.append({"name": SUBMITTER, "count": 1, "template": submitter_template(job)})
    return sets


def check_rayjob(
    job: Mapping[str, Any], errors: list[FieldError], *, elastic: bool = False
) -> None:
    """RAYJOB-1 … RAYJOB-3 and the cluster spec's rules, for a queued RayJob.

    ``elastic``: an elastic RayJob (annotation and gate), whose cluster may autoscale.
    """
    spec = _spec(job)
    has_cluster = isinstance(spec.get("rayClusterSpec"), Mapping)
    if uses_existing_cluster(job):
        if has_cluster:
            errors.append(
                error(
                    SPEC.child("clusterSelector"),
                    "a queued RayJob cannot use an existing cluster: remove clusterSelector, or "
                    "rayClusterSpec and the queue name (a RayJob on an existing cluster is not "
                    "queued)",
                    rule="RAYJOB-1",
                )
            )
        return
    if not has_cluster:
        errors.append(
            error(
                SPEC.child("rayClusterSpec"),
                "is required for a queued RayJob that does not use an existing cluster",
                rule="RAYJOB-2",
            )
        )
        return
    if spec.get("shutdownAfterJobFinishes") is not True:
        errors.append(
            error(
                SPEC.child("shutdownAfterJobFinishes"),
                "must be true for a queued RayJob: its cluster would hold the quota after the "
                "job ends",
                rule="RAYJOB-3",
            )
        )
    cluster_spec.check_cluster_spec(
        _cluster(job),
        SPEC.child("rayClusterSpec"),
        errors,
        extra_pod_sets=1 if submission_mode(job) == K8S_JOB_MODE else 0,
        elastic=elastic,
    )


class RayJob(SuspendedBySpec, RayAdmission, CopiedWhole):
    """The ``ray.io/rayjob`` integration (every method pure)."""

    framework = RAYJOB_FRAMEWORK
    api_version = "ray.io/v1"
    kind = "RayJob"
    group = "ray.io"
    resource = "rayjobs"
    access = ApiAccess(
        scheduler={"rayjobs": ("list", "watch", "patch")},
        # The owner chain of a created RayCluster: a queued RayJob's is left to it.
        webhook={"rayjobs": ("get",)},
        multikueue={"rayjobs": ("get",), "rayjobs/status": ("patch",)},
    )

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        """``Suspended`` once the copy is gone (the deployment status ``active`` reads)."""
        return field_set(
            status, "jobDeploymentStatus", "Suspended", lambda seen: seen not in NOT_RUNNING
        )

    def queue_name(self, job: RawObject) -> str:
        """The queue; none for a RayJob on an existing cluster (it is not queued)."""
        return "" if uses_existing_cluster(job) else objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        return pod_sets(job)

    def is_suspended(self, job: RawObject) -> bool:
        return is_suspended(job)

    def kind_rules(
        self, job: Mapping[str, Any], errors: list[FieldError], facts: AdmissionFacts
    ) -> None:
        check_rayjob(job, errors, elastic=facts.elastic_jobs and is_elastic(job))

    def scaling_child(self, job: RawObject) -> str | None:
        """The RayCluster KubeRay made for an elastic, autoscaling RayJob (its status says)."""
        if not (is_elastic(job) and cluster_spec.autoscales(_cluster(job))):
            return None
        name = objects.status(job).get("rayClusterName")
        return name if isinstance(name, str) and name else None

    def as_scaled(self, job: RawObject, child: RawObject) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        spec = result.setdefault("spec", {})
        spec["rayClusterSpec"] = cluster_spec.with_replicas_of(_cluster(job), _spec(child))
        return result

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        result, spec = unsuspended(job)
        cluster_spec.run_with(spec.setdefault("rayClusterSpec", {}), pod_sets)
        if submission_mode(job) == K8S_JOB_MODE:
            info = next((item for item in pod_sets if item.name == SUBMITTER), None)
            if info is not None:
                template = submitter_template(job)
                pod_template.steer(template, info)
                spec["submitterPodTemplate"] = template
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        spec = result.setdefault("spec", {})
        cluster_spec.restore(spec.setdefault("rayClusterSpec", {}), pod_sets)
        submitter = spec.get("submitterPodTemplate")
        recorded = next((p for p in pod_sets if p.get("name") == SUBMITTER), None)
        if isinstance(submitter, dict) and recorded is not None:
            pod_template.restore(submitter, _mapping(recorded.get("template")))
            if not submitter["metadata"]:
                del submitter["metadata"]
        return result

    def finished(self, job: RawObject) -> FinishedState:
        status = objects.status(job)
        if status.get("jobDeploymentStatus") not in ("Complete", "Failed"):
            return FinishedState(False)
        message = str(status.get("message") or "")
        if status.get("jobStatus") == "SUCCEEDED":
            return FinishedState(True, "Succeeded", message or "RayJob finished successfully")
        return FinishedState(True, "Failed", message or "RayJob failed")

    def active(self, job: RawObject) -> int:
        """1 unless the RayJob is new or ``Suspended`` (its cluster's pods are counted apart)."""
        return 0 if objects.status(job).get("jobDeploymentStatus", "") in NOT_RUNNING else 1

    def pods_ready(self, job: RawObject) -> bool:
        """Its cluster is ``ready`` in the RayJob's status (Kueue's ``PodsReady`` for a RayJob)."""
        cluster = objects.status(job).get("rayClusterStatus")
        return isinstance(cluster, Mapping) and cluster.get("state") == "ready"

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        result = with_queue_label(job, queue)
        if uses_existing_cluster(result):
            return result  # not queued: it runs on a cluster that is already there
        return self.suspend(result) if suspend else result


RAYJOB: Final = RayJob()
