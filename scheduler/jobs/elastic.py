"""Elastic jobs: a running job whose pod count changes (docs/concepts.md#elastic-jobs).

A job annotated ``kueue.x-k8s.io/elastic-job: "true"`` (with the gate
``ElasticJobsViaWorkloadSlices`` on, Kueue's default) may change its pod
count while it runs.  Kueue calls the Workloads of such a job *workload
slices*: a scale-down lowers the counts of the slice that holds the quota in
place, and the engine then charges only the pods asked for
(docs/scheduling.md#workload-usage).  This module decides the scale-down
(Kueue's ``EnsureWorkloadSlices`` for one admitted slice); a scale-up, which
in Kueue makes a new slice that replaces the old one once admitted, is
refused by kuota's webhook (docs/api-differences.md#elastic-jobs).
Every function is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import ELASTIC_JOB_ANNOTATION, WORKLOAD_SLICE_NAME_ANNOTATION
from scheduler.jobs.protocol import JobIntegration


@dataclass(frozen=True, slots=True)
class ScaleDownWorkload:
    """An elastic job running on its admission asks for fewer pods: lower its Workload's counts.

    ``workload`` is the Workload as read with the job's counts (its admission
    untouched); the write is guarded by the resourceVersion it was read at.
    """

    workload: dict[str, Any]
    difference: str


def elastic_scale_down(
    job: Mapping[str, Any], workload: Mapping[str, Any], integration: JobIntegration
) -> ScaleDownWorkload | None:
    """The Workload with the job's lower counts, when the job scaled down, else None: pure.

    A scale-down (Kueue's ``ScaledDown``) keeps the pod sets and their names,
    lowers at least one count and raises none.  The Workload is marked elastic
    on the way if it was made before the gate was on, as the Workload
    webhook allows a lower count only on an elastic Workload.
    """
    if objects.annotation(job, ELASTIC_JOB_ANNOTATION) != "true":
        return None
    recorded = [p for p in objects.spec(workload).get("podSets") or [] if isinstance(p, Mapping)]
    wanted = integration.pod_sets(job)
    if [str(p.get("name")) for p in wanted] != [str(p.get("name")) for p in recorded]:
        return None
    before = [_count_of(p) for p in recorded]
    after = [_count_of(p) for p in wanted]
    if after == before or any(a > b for a, b in zip(after, before, strict=True)):
        return None
    pod_sets = [{**p, "count": count} for p, count in zip(recorded, after, strict=True)]
    updated = copy.deepcopy(dict(workload))
    updated["spec"] = {**objects.spec(workload), "podSets": pod_sets}
    annotations = updated.setdefault("metadata", {}).setdefault("annotations", {})
    annotations.setdefault(ELASTIC_JOB_ANNOTATION, "true")
    annotations.setdefault(WORKLOAD_SLICE_NAME_ANNOTATION, objects.name(workload))
    difference = ", ".join(
        f"pod set {p.get('name')}: count {b} -> {a}"
        for p, b, a in zip(recorded, before, after, strict=True)
        if a != b
    )
    return ScaleDownWorkload(updated, difference)


def _count_of(pod_set: Mapping[str, Any]) -> int:
    count = pod_set.get("count")
    return count if isinstance(count, int) and not isinstance(count, bool) else 1


__all__ = ["ScaleDownWorkload", "elastic_scale_down"]
