"""JobSet rules of kuota's validating webhook (docs/validation.md#jobs).

Kueue's JobSet webhook (v0.19) runs the rules every job kind shares and
the topology annotations of each replicated job's pod template (TAS-1 …
TAS-8, :mod:`scheduler.jobs.topology_rules`; docs/validation.md#topology-annotations)
besides (``jobframework.ValidateJobOnCreate`` and ``ValidateJobOnUpdate``):
JOB-1 … JOB-4, JOB-11, JOB-12 on create and update, on the
JobSet's own ``metadata``, and JOB-U1 … JOB-U6, JOB-U10, JOB-U11 on update —
so the queue name cannot change while the JobSet runs, and a
WorkloadPriorityClass cannot be added to a running JobSet nor removed from
any.  The Job-only annotations (``job-min-parallelism``,
``job-completions-equal-parallelism``) are not recognised on a JobSet, and
its schema (replicated jobs, replicas) is the JobSet CRD's business.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldError, FieldPath
from scheduler.jobs.job_rules import validate_job_kind
from scheduler.jobs.jobset.shape import pod_count, replicated_jobs
from scheduler.jobs.topology_rules import check_topology_annotations, check_topology_groups


def validate_jobset(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    namespace_has_default_queue: bool = False,
) -> list[FieldError]:
    """Every JobSet rule (CREATE, or UPDATE when ``old`` is given): pure, never raises."""
    errors = validate_job_kind(new, old, namespace_has_default_queue=namespace_has_default_queue)
    if not isinstance(new, Mapping):
        return errors
    templates = []
    for index, replicated in enumerate(replicated_jobs(new)):
        path = FieldPath(("spec", "replicatedJobs", index, "template", "spec", "template"))
        template = _mapping(
            _mapping(_mapping(replicated.get("template")).get("spec")).get("template")
        )
        annotations = _mapping(_mapping(template.get("metadata")).get("annotations"))
        at = path.child("metadata", "annotations")
        check_topology_annotations(annotations, at, errors, count=pod_count(replicated))
        templates.append((at, annotations, pod_count(replicated)))
    check_topology_groups(templates, errors)
    return errors


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
