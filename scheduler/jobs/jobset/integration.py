"""The ``jobset.x-k8s.io/jobset`` integration: JobSets (``jobset.x-k8s.io/v1alpha2``).

A JobSet is one pod set per replicated job, named after it, whose size is
``replicas × parallelism`` (both defaulting to 1), the way Kueue counts it;
the pod set's template is the replicated job's pod template.  The queue is
the ``kueue.x-k8s.io/queue-name`` label (or the legacy annotation).  Starting
a JobSet unsuspends it and adds each admitted pod set's flavor node labels,
tolerations and kuota's pod labels to its replicated job's pod template;
stopping suspends it (the JobSet controller then suspends its child Jobs and
their pods go away) and restoring puts the templates recorded in the Workload
back.  A JobSet is finished when its ``Completed`` or ``Failed`` condition is
``True``.  The pods of a replicated job's succeeded child Jobs give their quota
back while the rest still run (Kueue's ``ReclaimablePods`` for a JobSet:
succeeded replicas × pods per replica, docs/concepts.md#reclaimable-pods).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.jobs import pod_template, topology
from scheduler.jobs.jobset.shape import count_of, job_spec, pod_count, replicated_jobs
from scheduler.jobs.jobset.validation import validate_jobset
from scheduler.jobs.multikueue_copy import CopiedWhole, zeroed_counts
from scheduler.jobs.protocol import (
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    PodSetInfo,
    RawObject,
    ReclaimableCount,
    finished_by_conditions,
    with_queue_label,
)
from scheduler.jobs.spec_suspend import SuspendedBySpec, unsuspended

JOBSET_FRAMEWORK: Final = "jobset.x-k8s.io/jobset"


_mapping = pod_template.mapping


def pods_per_replica(replicated: Mapping[str, Any]) -> int:
    """``min(parallelism, completions)`` of a replicated job's Job (parallelism defaults to 1,
    completions to parallelism): Kueue's ``PodsCountPerReplica``: pure."""
    spec = job_spec(replicated)
    parallelism = count_of(spec.get("parallelism"))
    completions = spec.get("completions")
    if isinstance(completions, int) and not isinstance(completions, bool):
        return min(parallelism, completions)
    return parallelism


def reclaimable(jobset: RawObject) -> list[ReclaimableCount]:
    """Per replicated job with succeeded replicas (at most ``replicas``): their pods: pure."""
    statuses = _mapping(jobset.get("status")).get("replicatedJobsStatus")
    succeeded = {
        str(item.get("name")): item.get("succeeded")
        for item in (statuses if isinstance(statuses, list) else [])
        if isinstance(item, Mapping)
    }
    found = []
    for replicated in replicated_jobs(jobset):
        name = str(replicated.get("name", ""))
        done = succeeded.get(name)
        if not isinstance(done, int) or isinstance(done, bool) or done <= 0:
            continue
        if done <= count_of(replicated.get("replicas")):
            found.append(ReclaimableCount(name, done * pods_per_replica(replicated)))
    return found


def _pod_template(replicated: dict[str, Any]) -> dict[str, Any]:
    """The (created if absent) pod template of a copied replicated job."""
    job_template = replicated.setdefault("template", {})
    job_spec = job_template.setdefault("spec", {})
    template: dict[str, Any] = job_spec.setdefault("template", {})
    return template


class JobSet(SuspendedBySpec, CopiedWhole):
    """The ``jobset.x-k8s.io/jobset`` integration (every method pure)."""

    framework = JOBSET_FRAMEWORK
    api_version = "jobset.x-k8s.io/v1alpha2"
    kind = "JobSet"
    group = "jobset.x-k8s.io"
    resource = "jobsets"
    access = ApiAccess(
        # Watch, start and stop JobSets; delete one whose Workload kuota deactivated
        # after afterDeactivatedByKueue (kube/retention.py).
        scheduler={"jobsets": ("list", "watch", "patch", "delete")},
        webhook={"jobsets": ("get",)},
        multikueue={"jobsets": ("get",), "jobsets/status": ("patch",)},
    )

    def stopped_status(self, status: Mapping[str, Any]) -> dict[str, Any] | None:
        """The child Jobs' counts zeroed: nothing of the copy runs any more."""
        return zeroed_counts(status, "replicatedJobsStatus", ("active", "ready"))

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        pod_sets = []
        for replicated in replicated_jobs(job):
            template = copy.deepcopy(dict(_mapping(job_spec(replicated).get("template"))))
            pod_set: dict[str, Any] = {
                "name": str(replicated.get("name", "")),
                "count": pod_count(replicated),
                "template": template,
            }
            request = topology.topology_request(
                template,
                pod_index_label=topology.JOB_COMPLETION_INDEX,
                sub_group_index_label=topology.JOBSET_JOB_INDEX,
                sub_group_count=count_of(replicated.get("replicas")),
            )
            if request is not None:
                pod_set["topologyRequest"] = request
            pod_sets.append(pod_set)
        return pod_sets

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        result, spec = unsuspended(job)
        infos = {info.name: info for info in pod_sets}
        for replicated in spec.get("replicatedJobs") or []:
            if not isinstance(replicated, dict):
                continue
            info = infos.get(str(replicated.get("name", "")))
            if info is None:
                continue
            pod_template.steer(_pod_template(replicated), info)
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Put back what the user wrote in each replicated job's pod template.

        See docs/concepts.md#eviction-and-restore.

        Labels, annotations, nodeSelector, tolerations and schedulingGates are
        replaced wholesale by the Workload's record of the pod set of the same
        name, so everything the admission added disappears.
        """
        result = copy.deepcopy(dict(job))
        recorded_by_name = {str(p.get("name")): p for p in pod_sets}
        for replicated in _mapping(result.get("spec")).get("replicatedJobs") or []:
            if not isinstance(replicated, dict):
                continue
            recorded_set = recorded_by_name.get(str(replicated.get("name", "")))
            if recorded_set is None:
                continue
            template = _pod_template(replicated)
            pod_template.restore(template, _mapping(recorded_set.get("template")))
            if not template["metadata"]:
                del template["metadata"]
        return result

    def finished(self, job: RawObject) -> FinishedState:
        return finished_by_conditions(job, succeeded="Completed", kind="JobSet")

    def reclaimable_pods(self, job: RawObject) -> list[ReclaimableCount]:
        return reclaimable(job)

    def active(self, job: RawObject) -> int:
        """The child Jobs the JobSet controller reports active (``replicatedJobsStatus``)."""
        return active_jobs(job)

    def pods_ready(self, job: RawObject) -> bool:
        return pods_ready(job)

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        result = with_queue_label(job, queue)
        return self.suspend(result) if suspend else result

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        return validate_jobset(job, None)

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return validate_jobset(
            job, old, namespace_has_default_queue=facts.namespace_has_default_queue
        )


def active_jobs(jobset: RawObject) -> int:
    """The child Jobs the JobSet controller reports active (``replicatedJobsStatus``): pure."""
    statuses = objects.status(jobset).get("replicatedJobsStatus")
    if not isinstance(statuses, list):
        return 0
    return sum(
        s["active"] for s in statuses if isinstance(s, Mapping) and isinstance(s.get("active"), int)
    )


def pods_ready(jobset: RawObject) -> bool:
    """Kueue's rule: the child Jobs ready or succeeded equal the replicas of all replicated
    jobs (``replicatedJobsStatus``): pure."""
    replicas = sum(count_of(replicated.get("replicas")) for replicated in replicated_jobs(jobset))
    statuses = objects.status(jobset).get("replicatedJobsStatus")
    ready = 0
    for entry in statuses if isinstance(statuses, list) else []:
        if isinstance(entry, Mapping):
            for key in ("ready", "succeeded"):
                value = entry.get(key)
                ready += value if isinstance(value, int) and not isinstance(value, bool) else 0
    return ready == replicas


JOBSET: Final = JobSet()
