"""A JobSet's replicated jobs and how many pods each runs (pure readers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.jobs.pod_template import mapping as _mapping


def count_of(value: object) -> int:
    """An int field, 1 when absent or not an int (replicas, parallelism): pure."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def replicated_jobs(jobset: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The JobSet's ``spec.replicatedJobs`` that are objects: pure."""
    value = _mapping(jobset.get("spec")).get("replicatedJobs")
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def job_spec(replicated: Mapping[str, Any]) -> Mapping[str, Any]:
    """The spec of a replicated job's Job template: pure."""
    return _mapping(_mapping(replicated.get("template")).get("spec"))


def pod_count(replicated: Mapping[str, Any]) -> int:
    """``replicas × parallelism`` of one replicated job (both default to 1): pure."""
    return count_of(replicated.get("replicas")) * count_of(job_spec(replicated).get("parallelism"))


__all__ = ["count_of", "job_spec", "pod_count", "replicated_jobs"]
