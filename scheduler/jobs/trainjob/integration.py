"""The ``trainer.kubeflow.org/trainjob`` integration: Kubeflow Trainer v2's TrainJobs.

A TrainJob is queued as the JobSet Trainer makes for it
(:mod:`~scheduler.jobs.trainjob.child_jobset`): one pod set per replicated
job, counted and shaped as for a JobSet, so its pod sets need the runtime it
names; the scheduler resolves it (:class:`~scheduler.jobs.ResolvedThroughReference`).
The mutating webhook suspends a queued TrainJob and gives it an empty
runtime patch of kuota's, ``manager: kueue.x-k8s.io/manager``, as Kueue
does.  Starting it writes each admitted pod set's placement into that patch
(per replicated job: the pod template's labels, annotations, nodeSelector,
tolerations and scheduling gates) and unsuspends it; Trainer then makes the
JobSet with them.  Restoring clears the patch's replicated jobs.  A TrainJob
is finished when its ``Complete`` or ``Failed`` condition is True; what it
still runs, how many of its pods are ready and which finished pods give
their quota back come from ``status.jobsStatus``, read as a JobSet's
``replicatedJobsStatus`` (docs/concepts.md#trainjob).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.jobs.jobset import JOBSET, active_jobs
from scheduler.jobs.jobset.integration import pods_ready, reclaimable
from scheduler.jobs.multikueue_copy import CopiedWhole, zeroed_counts
from scheduler.jobs.protocol import (
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    PodSetInfo,
    RawObject,
    ReclaimableCount,
    Reference,
    ReferencedKind,
    finished_by_conditions,
    with_queue_label,
)
from scheduler.jobs.spec_suspend import SuspendedBySpec, unsuspended
from scheduler.jobs.trainjob.child_jobset import (
    CLUSTER_RUNTIME,
    NAMESPACED_RUNTIME,
    TRAINER_API_VERSION,
    replicated_jobs,
    runtime_errors,
    runtime_ref,
)
from scheduler.jobs.trainjob.validation import validate_trainjob

TRAINJOB_FRAMEWORK: Final = "trainer.kubeflow.org/trainjob"
KUEUE_PATCH_MANAGER: Final = "kueue.x-k8s.io/manager"
"""The ``manager`` of kuota's entry in ``spec.runtimePatches`` (Kueue's)."""
RESOLVED_RUNTIME: Final = "kuota.resolvedRuntimeSpec"
"""Where a resolved TrainJob carries its runtime's ``spec`` while it is decided (in
memory only: the object is written by JSON patches computed from it, which never
touch this key)."""


def child_jobset(trainjob: RawObject) -> dict[str, Any] | None:
    """The JobSet Trainer makes for a resolved TrainJob, with the TrainJob's ``jobsStatus``
    as its ``replicatedJobsStatus``; None when the TrainJob is not resolved."""
    runtime_spec = trainjob.get(RESOLVED_RUNTIME) if isinstance(trainjob, Mapping) else None
    if not isinstance(runtime_spec, Mapping):
        return None
    return {
        "apiVersion": JOBSET.api_version,
        "kind": JOBSET.kind,
        "metadata": {"name": objects.name(trainjob), "namespace": objects.namespace(trainjob)},
        "spec": {"replicatedJobs": replicated_jobs(trainjob, runtime_spec)},
        "status": {"replicatedJobsStatus": copy.deepcopy(_jobs_status(trainjob))},
    }


def _jobs_status(trainjob: RawObject) -> list[Any]:
    statuses = objects.status(trainjob).get("jobsStatus")
    return list(statuses) if isinstance(statuses, list) else []


def _kueue_patch(spec: dict[str, Any]) -> dict[str, Any]:
    """kuota's runtime patch in ``spec`` (a copy being edited), added when missing."""
    patches = spec.setdefault("runtimePatches", [])
    for patch in patches:
        if isinstance(patch, dict) and patch.get("manager") == KUEUE_PATCH_MANAGER:
            return patch
    patch = {"manager": KUEUE_PATCH_MANAGER}
    patches.append(patch)
    return patch


def _patch_job_spec(patch: dict[str, Any]) -> dict[str, Any]:
    """The ``trainingRuntimeSpec.template.spec`` of a runtime patch (created if absent)."""
    runtime_spec = patch.setdefault("trainingRuntimeSpec", {})
    template = runtime_spec.setdefault("template", {})
    job_spec: dict[str, Any] = template.setdefault("spec", {})
    return job_spec


def _placement(info: PodSetInfo) -> dict[str, Any]:
    """One replicated job's patch: the admitted pod set's placement."""
    metadata = {
        key: dict(value)
        for key, value in (("labels", info.labels), ("annotations", info.annotations))
        if value
    }
    pod_spec: dict[str, Any] = {}
    if info.node_selector:
        pod_spec["nodeSelector"] = dict(info.node_selector)
    if info.tolerations:
        pod_spec["tolerations"] = [dict(toleration) for toleration in info.tolerations]
    if info.scheduling_gates:
        pod_spec["schedulingGates"] = [{"name": gate} for gate in info.scheduling_gates]
    template: dict[str, Any] = {}
    if metadata:
        template["metadata"] = metadata
    if pod_spec:
        template["spec"] = pod_spec
    return {"name": info.name, "template": {"spec": {"template": template}}}


class TrainJob(SuspendedBySpec, CopiedWhole):
    """The ``trainer.kubeflow.org/trainjob`` integration (every method pure)."""

    framework = TRAINJOB_FRAMEWORK
    api_version = TRAINER_API_VERSION
    kind = "TrainJob"
    group = "trainer.kubeflow.org"
    resource = "trainjobs"
    access = ApiAccess(
        # Watch, start and stop TrainJobs; read the runtimes their pod sets come from.
        scheduler={
            "trainjobs": ("list", "watch", "patch"),
            "trainingruntimes": ("list", "watch"),
            "clustertrainingruntimes": ("list", "watch"),
        },
        webhook={
            "trainjobs": ("get",),
            "trainingruntimes": ("get",),
            "clustertrainingruntimes": ("get",),
        },
        multikueue={"trainjobs": ("get",), "trainjobs/status": ("patch",)},
    )
    referenced_kinds = (
        ReferencedKind(TRAINER_API_VERSION, CLUSTER_RUNTIME, "clustertrainingruntimes"),
        ReferencedKind(TRAINER_API_VERSION, NAMESPACED_RUNTIME, "trainingruntimes"),
    )

    def reference(self, job: RawObject) -> Reference | None:
        ref = runtime_ref(job)
        if ref is None:
            return None
        namespace = None if ref.cluster_scoped else (objects.namespace(job) or "")
        return Reference(TRAINER_API_VERSION, ref.kind, ref.name, namespace)

    def resolved(self, job: RawObject, referenced: RawObject) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        result[RESOLVED_RUNTIME] = copy.deepcopy(dict(objects.spec(referenced)))
        return result

    def referenced_errors(self, referenced: RawObject) -> list[str]:
        return runtime_errors(referenced)

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        child = child_jobset(job)
        return JOBSET.pod_sets(child) if child is not None else []

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        result, spec = unsuspended(job)
        placements = [_placement(info) for info in pod_sets]
        _patch_job_spec(_kueue_patch(spec))["replicatedJobs"] = placements
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Clear the replicated jobs of kuota's runtime patch: the runtime's templates, as the
        user patched them, are what runs next (docs/concepts.md#eviction-and-restore)."""
        result = copy.deepcopy(dict(job))
        _patch_job_spec(_kueue_patch(result.setdefault("spec", {}))).pop("replicatedJobs", None)
        return result

    def finished(self, job: RawObject) -> FinishedState:
        return finished_by_conditions(job, succeeded="Complete", kind="TrainJob")

    def active(self, job: RawObject) -> int:
        """The child Jobs Trainer reports active (``status.jobsStatus``)."""
        return active_jobs({"status": {"replicatedJobsStatus": _jobs_status(job)}})

    def pods_ready(self, job: RawObject) -> bool:
        child = child_jobset(job)
        return child is not None and pods_ready(child)

    def reclaimable_pods(self, job: RawObject) -> list[ReclaimableCount]:
        child = child_jobset(job)
        return reclaimable(child) if child is not None else []

    def remote_copy(self, job: RawObject, workload_name: str, origin: str) -> dict[str, Any]:
        """The copy without kuota's runtime patch: the worker's webhook adds its own (a
        second entry of one manager would be refused)."""
        result = super().remote_copy(job, workload_name, origin)
        patches = result["spec"].get("runtimePatches")
        if isinstance(patches, list):
            kept = [
                patch
                for patch in patches
                if not (isinstance(patch, Mapping) and patch.get("manager") == KUEUE_PATCH_MANAGER)
            ]
            if kept:
                result["spec"]["runtimePatches"] = kept
            else:
                del result["spec"]["runtimePatches"]
        return result

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        """The child Jobs' counts zeroed: nothing of the copy runs any more."""
        return zeroed_counts(status, "jobsStatus", ("active", "ready"))

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        """Queue label, suspension, and kuota's (empty) runtime patch, as Kueue's webhook."""
        result = with_queue_label(job, queue)
        if suspend:
            result = self.suspend(result)
        _patch_job_spec(_kueue_patch(result.setdefault("spec", {})))
        return result

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        return validate_trainjob(job, None, child=child_jobset(job))

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return validate_trainjob(
            job,
            old,
            namespace_has_default_queue=facts.namespace_has_default_queue,
            child=child_jobset(job),
        )


TRAINJOB: Final = TrainJob()
