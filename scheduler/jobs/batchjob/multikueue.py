"""A batch/v1 Job on a MultiKueue worker: the copy made there, and its status once stopped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.jobs.multikueue_copy import SPEC_MANAGED_BY, copy_for_worker
from scheduler.jobs.protocol import RawObject

TEMPLATE_LABELS_SET_BY_THE_API: Final = (
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
)
"""Pod-template labels the API server derives from a Job's UID: a new Job gets its own."""


def remote_job(job: RawObject, workload_name: str, origin: str) -> dict[str, Any]:
    """The manager's Job as created on the worker that admitted it: pure.

    The worker's kuota finds the admitted copy through ``prebuilt-workload-name``
    instead of making a Workload; without ``managedBy`` the worker's batch Job
    controller runs it; the selector and the template's UID labels go, as the
    API server sets them again for the new Job.
    """
    result = copy_for_worker(job, workload_name, origin, managed_by_at=SPEC_MANAGED_BY)
    spec = result["spec"]
    spec.pop("selector", None)
    template = spec.get("template")
    template_meta = template.get("metadata") if isinstance(template, dict) else None
    labels = template_meta.get("labels") if isinstance(template_meta, dict) else None
    if isinstance(labels, dict):
        for key in TEMPLATE_LABELS_SET_BY_THE_API:
            labels.pop(key, None)
    return result


def stopped_status(status: Mapping[str, Any]) -> dict[str, Any] | None:
    """The manager's Job status with its copied pod counts zeroed, None when already so: pure.

    The manager's pods are the worker's: once the worker's objects are gone,
    nothing runs (Kueue suspends the remote Job and copies its status instead).
    """
    if not (status.get("active") or status.get("ready") or status.get("terminating")):
        return None
    stopped = dict(status)
    stopped.update(active=0, ready=0)
    stopped.pop("terminating", None)
    return stopped
