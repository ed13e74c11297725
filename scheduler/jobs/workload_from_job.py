"""Job → Workload, exactly as the Job controller creates it (docs/concepts.md#from-job-to-workload).

The Workload is the scheduler's view of a job: one per Job, named
``job-<jobName>-<hash>`` (``<hash>`` = the first 5 hex digits of the SHA-1 of
``"<Kind>\\n<group>\\n<jobName>\\n<jobUID>"``, the ``job-<jobName>`` prefix cut
to 247 characters so the name stays a valid 253-character object name), owned
by the Job, labelled with the Job's UID, and carrying the Job's queue name,
pod sets and priority.  As Kueue's ``NewWorkload`` it also carries the job's
labels whose keys the Configuration's ``integrations.labelKeysToCopy`` lists
(with the ``CustomMetricLabels`` gate, also the labels and annotations the
Workload custom metric labels read, docs/metrics.md#custom-labels)
and the job's ``kueue.x-k8s.io/admission-gated-by`` annotation
(docs/concepts.md#from-job-to-workload).  The Workload of an elastic job
(annotation ``kueue.x-k8s.io/elastic-job: "true"``, with the gate
``ElasticJobsViaWorkloadSlices`` on) is marked elastic too and names its
slice chain (``kueue.x-k8s.io/workload-slice-name``: its own name), as
Kueue's first workload slice is (docs/concepts.md#elastic-jobs).  The functions here are pure: the
caller supplies the priority classes it knows, so the same code serves the live
controller and ``kuota simulate``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.custom_labels import NOTHING_COPIED, CopiedMetadata
from scheduler.api.refs import (
    ADMISSION_GATED_BY_ANNOTATION,
    ELASTIC_JOB_ANNOTATION,
    JOB_UID_LABEL,
    KUEUE_GROUP,
    MAX_EXEC_TIME_SECONDS_KEY,
    PRIORITY_CLASS_LABEL,
    V1BETA2,
    WORKLOAD_SLICE_NAME_ANNOTATION,
)
from scheduler.jobs.pod_template import without_duplicate_env
from scheduler.jobs.protocol import JobIntegration, JobPriorityClass
from scheduler.jobs.registry import capability, for_object, job_integration

NAME_PREFIX_LIMIT: Final = 247
HASH_LENGTH: Final = 5


@dataclass(frozen=True, slots=True)
class PriorityClasses:
    """The priority classes known when the Workload is made.

    ``workload``: WorkloadPriorityClass name → value; ``pod``: scheduling.k8s.io
    PriorityClass name → value; ``global_default``: (name, value) of the
    lowest-valued PriorityClass with ``globalDefault: true``, if any.
    """

    workload: Mapping[str, int] = field(default_factory=dict)
    pod: Mapping[str, int] = field(default_factory=dict)
    global_default: tuple[str, int] | None = None


def workload_name(
    owner_name: str, owner_uid: str, *, kind: str = "Job", group: str = "batch"
) -> str:
    """``<kind-lowercase>-<owner>-<hash>`` as the controller names the Workload: pure."""
    digest = hashlib.sha1(f"{kind}\n{group}\n{owner_name}\n{owner_uid}".encode()).hexdigest()
    prefix = f"{kind.lower()}-{owner_name}"[:NAME_PREFIX_LIMIT]
    return f"{prefix}-{digest[:HASH_LENGTH]}"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def priority_of(
    job: Mapping[str, Any],
    classes: PriorityClasses,
    pod_sets: list[dict[str, Any]],
    *,
    job_class: str = "",
) -> tuple[dict[str, str] | None, int | None]:
    """(priorityClassRef, priority) by the documented rule: pure.

    ``job_class``: the PriorityClass the kind itself names for the job (a
    Kubeflow job's ``runPolicy.schedulingPolicy.priorityClass``), before any
    pod set's.  A named class that is not in ``classes`` keeps its reference
    and leaves ``priority`` unset, for the scheduler to resolve later.
    """
    workload_class = objects.labels(job).get(PRIORITY_CLASS_LABEL)
    if workload_class:
        ref = {"group": KUEUE_GROUP, "kind": "WorkloadPriorityClass", "name": workload_class}
        return ref, classes.workload.get(workload_class)
    # The first pod set's template that names a PriorityClass (a Job has one pod set).
    pod_class = job_class or next(
        (
            name
            for pod_set in pod_sets
            if isinstance(
                name := _mapping(_mapping(pod_set.get("template")).get("spec")).get(
                    "priorityClassName"
                ),
                str,
            )
            and name
        ),
        None,
    )
    if pod_class:
        ref = {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": pod_class}
        return ref, classes.pod.get(pod_class)
    if classes.global_default is not None:
        name, value = classes.global_default
        return {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": name}, value
    return None, None


def workload_priority(
    job: Mapping[str, Any],
    pod_sets: list[dict[str, Any]],
    classes: PriorityClasses | None = None,
) -> tuple[dict[str, str] | None, int | None]:
    """(priorityClassRef, priority) the job asks for now (docs/concepts.md#from-job-to-workload).

    The PriorityClass a kind names for the whole job (:class:`JobPriorityClass`)
    counts as it does when the Workload is made.  Pure.
    """
    integration = for_object(job)
    declared = capability(integration, JobPriorityClass) if integration is not None else None
    return priority_of(
        job,
        classes or PriorityClasses(),
        pod_sets,
        job_class=declared.priority_class(job) if declared is not None else "",
    )


def copied_keys(found: Mapping[str, str], keys: Collection[str]) -> dict[str, str]:
    """The entries of a job's labels (or annotations) that its Workload copies: pure."""
    return {key: found[key] for key in sorted(set(keys)) if key in found}


def admission_gates(job: Mapping[str, Any]) -> str:
    """The job's ``kueue.x-k8s.io/admission-gated-by`` value, ``""`` when none: pure."""
    return objects.annotation(job, ADMISSION_GATED_BY_ANNOTATION) or ""


def maximum_execution_time(job: Mapping[str, Any]) -> int | None:
    """The Workload's ``maximumExecutionTimeSeconds`` from the job's label: pure.

    Kueue reads the label ``kueue.x-k8s.io/max-exec-time-seconds`` (the one
    its webhook and kuota's validate, JOB-3/JOB-4); a value that is not a
    positive int32 sets nothing.
    """
    value = objects.labels(job).get(MAX_EXEC_TIME_SECONDS_KEY, "")
    if not isinstance(value, str) or not value.isdigit():
        return None
    seconds = int(value)
    return seconds if 0 < seconds < 2**31 else None


def owner_reference(job: Mapping[str, Any], integration: JobIntegration) -> dict[str, Any]:
    """The controller reference a job's Workload carries to it: pure."""
    return {
        "apiVersion": integration.api_version,
        "kind": integration.kind,
        "name": objects.name(job),
        "uid": objects.uid(job) or "",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def workload_from_job(
    job: Mapping[str, Any],
    *,
    priority_classes: PriorityClasses | None = None,
    integration: JobIntegration | None = None,
    pod_sets: list[dict[str, Any]] | None = None,
    copied: CopiedMetadata = NOTHING_COPIED,
    elastic_jobs: bool = True,
) -> dict[str, Any]:
    """The raw ``kueue.x-k8s.io/v1beta2`` Workload for ``job``: pure.

    ``job`` is an object of ``integration`` (by default the one its
    apiVersion/kind names; an object that names none is taken for a
    ``batch/v1`` Job); absent metadata fields are treated as empty strings.
    ``pod_sets``: the Workload's pod sets when the caller has them (a pod
    group's are its pods', not one object's), else the integration's.
    ``copied``: the job labels and annotations the Workload carries
    (``integrations.labelKeysToCopy``, and with ``CustomMetricLabels`` the keys of
    the Workload custom metric labels).
    ``elastic_jobs``: the gate ``ElasticJobsViaWorkloadSlices``.
    """
    integration = integration or for_object(job) or job_integration("batch/job")
    if integration is None:
        raise ValueError("no job integration is registered for this object")
    name = objects.name(job)
    namespace = objects.namespace(job) or ""
    uid = objects.uid(job) or ""
    workload_metadata: dict[str, Any] = {
        "name": workload_name(name, uid, kind=integration.kind, group=integration.group),
        "namespace": namespace,
        "labels": {**copied_keys(objects.labels(job), copied.labels), JOB_UID_LABEL: uid},
        "ownerReferences": [owner_reference(job, integration)],
    }
    annotations = copied_keys(objects.annotations(job), copied.annotations)
    gates = admission_gates(job)
    if gates:
        annotations[ADMISSION_GATED_BY_ANNOTATION] = gates
    if elastic_jobs and objects.annotation(job, ELASTIC_JOB_ANNOTATION) == "true":
        annotations[ELASTIC_JOB_ANNOTATION] = "true"
        annotations[WORKLOAD_SLICE_NAME_ANNOTATION] = workload_metadata["name"]
    if annotations:
        workload_metadata["annotations"] = annotations
    if pod_sets is None:
        pod_sets = integration.pod_sets(job)
    # Env variables named twice are kept once, with the value the kubelet uses, as Kueue does.
    pod_sets = [dict(without_duplicate_env(pod_set)) for pod_set in pod_sets]
    spec: dict[str, Any] = {"podSets": pod_sets}
    queue = integration.queue_name(job)
    if queue:
        spec["queueName"] = queue
    declared = capability(integration, JobPriorityClass)
    ref, value = priority_of(
        job,
        priority_classes or PriorityClasses(),
        pod_sets,
        job_class=declared.priority_class(job) if declared is not None else "",
    )
    if ref is not None:
        spec["priorityClassRef"] = ref
    if value is not None:
        spec["priority"] = value
    max_exec = maximum_execution_time(job)
    if max_exec is not None:
        spec["maximumExecutionTimeSeconds"] = max_exec
    return {"apiVersion": V1BETA2, "kind": "Workload", "metadata": workload_metadata, "spec": spec}
