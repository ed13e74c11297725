"""TrainJob rules of kuota's validating webhook (docs/validation.md#jobs).

Kueue's TrainJob webhook (v0.19) runs the rules every job kind shares
(JOB-1 … JOB-4, JOB-11, JOB-12 on create and update, JOB-U1 … JOB-U6,
JOB-U10, JOB-U11 on update) and, on the pod templates of the JobSet Trainer
would make from the TrainJob's runtime, the topology annotations (TAS-1 …
TAS-7, :mod:`scheduler.jobs.topology_rules`), reported at ``job[<replicated
job>].annotations`` with a hint at where to fix them.  The topology rules
need the runtime: the webhook reads it and passes the JobSet as ``child``;
without it (``kuota validate``, or a runtime not created yet, which Trainer's
own webhook refuses) only the shared rules run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.field import FieldError, FieldPath
from scheduler.jobs.job_rules import validate_job_kind
from scheduler.jobs.jobset.shape import pod_count, replicated_jobs
from scheduler.jobs.pod_template import mapping
from scheduler.jobs.topology_rules import check_topology_annotations

WHERE_TO_FIX: Final = (
    '. Adjust either the "TrainJob.spec.runtimePatches" or the "TrainingRuntime.Template" '
    "annotations for the corresponding Job"
)


def validate_trainjob(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    namespace_has_default_queue: bool = False,
    child: Mapping[str, Any] | None = None,
) -> list[FieldError]:
    """Every TrainJob rule (CREATE, or UPDATE when ``old`` is given): pure, never raises."""
    errors = validate_job_kind(new, old, namespace_has_default_queue=namespace_has_default_queue)
    if not isinstance(new, Mapping) or child is None:
        return errors
    topology: list[FieldError] = []
    for replicated in replicated_jobs(child):
        template = mapping(mapping(mapping(replicated.get("template")).get("spec")).get("template"))
        annotations = mapping(mapping(template.get("metadata")).get("annotations"))
        at = FieldPath(("job",)).key(str(replicated.get("name", ""))).child("annotations")
        check_topology_annotations(annotations, at, topology, count=pod_count(replicated))
    return errors + [
        dataclasses.replace(item, message=item.message + WHERE_TO_FIX) for item in topology
    ]
