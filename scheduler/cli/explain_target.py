"""Which job and Workload ``kuota explain TARGET`` names: pure.

A target is ``JOB``, ``job/NAME``, ``<kind>/NAME`` of any job integration
(``jobset/NAME``, ``leaderworkerset/NAME``) or ``workload/NAME``; a bare name
is looked up among the queued jobs of every kind (Jobs first), then the
Workloads. A job's Workload is the one it owns (owner reference, or label
``kueue.x-k8s.io/job-uid``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.cli.live import ClusterObjects, key_of, metadata, owner_job_uid
from scheduler.jobs import Integration, ReplicaGroups, SuspendOnCreate, capability, integrations


@dataclass(frozen=True, slots=True)
class Target:
    job: Mapping[str, Any] | None
    workload: Mapping[str, Any] | None


def _kind_names(integration: Integration) -> set[str]:
    """How a kind may be named in a target: ``job``, ``jobs``, ``job.batch``: pure."""
    kind = integration.kind.lower()
    return {kind, integration.resource, f"{kind}.{integration.group}"} | {
        f"{integration.resource}.{integration.group}"
    }


def kind_of(job: Mapping[str, Any]) -> str:
    """A job object's kind, ``Job`` when it names none: pure."""
    kind = job.get("kind")
    return kind if isinstance(kind, str) and kind else "Job"


def find_target(objects: ClusterObjects, target: str, namespace: str) -> Target | str:
    """The Job and/or Workload named by ``target`` in ``namespace``, or why there is none: pure."""
    kind, _, name = target.partition("/") if "/" in target else ("", "", target)
    kind = kind.lower()
    in_namespace = [w for w in objects.workloads if metadata(w).get("namespace") == namespace]
    if kind in ("workload", "workloads", "wl"):
        found = next((w for w in in_namespace if metadata(w).get("name") == name), None)
        if found is None:
            return f"Workload {name} not found in namespace {namespace}"
        uid = owner_job_uid(found)
        job = (
            next((j for j in objects.jobs if metadata(j).get("uid") == uid), None) if uid else None
        )
        return Target(job, found)
    kinds = [i.kind for i in job_kinds() if not kind or kind in _kind_names(i)]
    if not kinds:
        return (
            f"cannot explain {kind!r}: name a Job (JOB or job/NAME), another kind of job "
            "(KIND/NAME, e.g. jobset/NAME, leaderworkerset/NAME) or a Workload (workload/NAME)"
        )
    job = next(
        (
            j
            for wanted in kinds
            for j in objects.jobs
            if kind_of(j) == wanted
            and metadata(j).get("namespace") == namespace
            and metadata(j).get("name") == name
        ),
        None,
    )
    if job is None:
        if not kind:
            found = next((w for w in in_namespace if metadata(w).get("name") == name), None)
            if found is not None:
                return Target(None, found)
        what = "Job" if kinds == ["Job"] or not kind else kinds[0]
        return (
            f"{what} {name} not found in namespace {namespace} among {what}s with the "
            f"kueue.x-k8s.io/queue-name label (kuota only queues {what}s that carry it)"
        )
    uid = metadata(job).get("uid")
    workload = next((w for w in in_namespace if owner_job_uid(w) == uid), None)
    return Target(job, workload)


def every_target(objects: ClusterObjects, target: Target) -> list[Target]:
    """``target``, or one target per Workload when its job has several (one per replica of a
    kind with replica groups), in name order: pure."""
    if target.job is None:
        return [target]
    job_meta = metadata(target.job)
    owned = sorted(
        (
            w
            for w in objects.workloads
            if metadata(w).get("namespace") == job_meta.get("namespace")
            and owner_job_uid(w) == job_meta.get("uid")
        ),
        key=key_of,
    )
    return [Target(target.job, w) for w in owned] if len(owned) > 1 else [target]


def job_kinds() -> list[Integration]:
    """The job kinds read and explained: those created suspended (Jobs, JobSets), and those
    whose replicas are queued as groups (LeaderWorkerSets: one Workload per replica)."""
    return [
        i
        for i in integrations()
        if capability(i, SuspendOnCreate) is not None or capability(i, ReplicaGroups) is not None
    ]
