"""The kinds that keep their suspend flag at ``spec.suspend`` (Job, JobSet, TrainJob, ...).

One home for reading and writing it, so a kind only says where it differs
(a RayJob also reads its deployment status).  Pure.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.jobs.pod_template import mapping
from scheduler.jobs.protocol import RawObject


def unsuspended(job: RawObject) -> tuple[dict[str, Any], dict[str, Any]]:
    """A copy of ``job`` with ``spec.suspend: false``, and that copy's ``spec`` to edit."""
    result = copy.deepcopy(dict(job))
    spec: dict[str, Any] = result.setdefault("spec", {})
    spec["suspend"] = False
    return result, spec


class SuspendedBySpec:
    """``is_suspended`` and ``suspend`` of a kind whose flag is ``spec.suspend``."""

    def is_suspended(self, job: RawObject) -> bool:
        return mapping(job.get("spec")).get("suspend") is True

    def suspend(self, job: RawObject) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        result.setdefault("spec", {})["suspend"] = True
        return result
