"""JobSet rules of kuota's validating webhook (docs/validation.md#jobs).

Kueue's JobSet webhook (v0.19) runs the rules every job kind shares and
nothing of its own (``jobframework.ValidateJobOnCreate`` and
``ValidateJobOnUpdate``; its topology checks are TAS, which kuota does not
implement): JOB-1 … JOB-4, JOB-11, JOB-12 on create and update, on the
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

from scheduler.api.field import FieldError
from scheduler.jobs.job_rules import validate_job_kind


def validate_jobset(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None = None,
    *,
    namespace_has_default_queue: bool = False,
) -> list[FieldError]:
    """Every JobSet rule (CREATE, or UPDATE when ``old`` is given): pure, never raises."""
    return validate_job_kind(new, old, namespace_has_default_queue=namespace_has_default_queue)
