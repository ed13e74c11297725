"""What MultiKueue copies to a worker, and what the manager's object says once the copy is gone.

Every kind MultiKueue dispatches (docs/concepts.md#multikueue) is copied the
same way, as Kueue's adapters copy them: name, namespace, labels and
annotations, the whole ``spec``; the copy carries the manager's origin and
its Workload's name (``prebuilt-workload-name``, so the worker's kuota
admits the copy of the Workload instead of making one) and no ``managedBy``,
so the framework's own controller on the worker runs it.  Kinds differ only
in where ``managedBy`` lives (``spec.managedBy``; the Kubeflow kinds keep it
in ``spec.runPolicy``) and in what their status says while something runs.
Everything here is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import MULTIKUEUE_ORIGIN_LABEL, PREBUILT_WORKLOAD_KEY
from scheduler.jobs.protocol import RawObject

SPEC_MANAGED_BY: Final = ("spec", "managedBy")
"""Where most kinds keep ``managedBy``."""


def managed_by(job: RawObject, at: Sequence[str]) -> object:
    """The value at ``at`` (``("spec", "managedBy")``), None when absent."""
    cursor: object = job
    for key in at:
        if not isinstance(cursor, Mapping):
            return None
        cursor = cursor.get(key)
    return cursor


def with_managed_by(job: RawObject, at: Sequence[str], value: str | None) -> dict[str, Any]:
    """A copy of ``job`` whose ``managedBy`` at ``at`` is ``value`` (None: removed)."""
    result = copy.deepcopy(dict(job))
    cursor: dict[str, Any] = result
    for key in at[:-1]:
        nested = cursor.get(key)
        if not isinstance(nested, dict):
            if value is None:
                return result
            nested = cursor[key] = {}
        cursor = nested
    if value is None:
        cursor.pop(at[-1], None)
    else:
        cursor[at[-1]] = value
    return result


def copy_for_worker(
    job: RawObject, workload_name: str, origin: str, *, managed_by_at: Sequence[str]
) -> dict[str, Any]:
    """The manager's object as created on the worker that admitted its Workload."""
    meta = objects.metadata_for_copy(job)
    meta["labels"][MULTIKUEUE_ORIGIN_LABEL] = origin
    meta["labels"][PREBUILT_WORKLOAD_KEY] = workload_name
    spec_only = {"spec": copy.deepcopy(dict(objects.spec(job)))}
    spec = with_managed_by(spec_only, managed_by_at, None)["spec"]
    return {
        "apiVersion": str(job.get("apiVersion", "")),
        "kind": str(job.get("kind", "")),
        "metadata": meta,
        "spec": spec,
    }


class CopiedWhole:
    """A kind MultiKueue copies whole: its ``remote_copy`` is :func:`copy_for_worker` with
    its ``managed_by_at`` (``spec.managedBy`` unless the kind says otherwise)."""

    managed_by_at: tuple[str, ...] = SPEC_MANAGED_BY

    def remote_copy(self, job: RawObject, workload_name: str, origin: str) -> dict[str, Any]:
        return copy_for_worker(job, workload_name, origin, managed_by_at=self.managed_by_at)


def zeroed_counts(
    status: Mapping[str, Any], entries: str, fields: Sequence[str]
) -> dict[str, Any] | None:
    """``status`` with ``fields`` of every entry of ``status[entries]`` at 0, None when already.

    ``entries`` holds a list (a JobSet's ``replicatedJobsStatus``) or a map
    (a Kubeflow job's ``replicaStatuses``) of per-part counts.
    """
    found = status.get(entries)
    parts: list[Any] = (
        list(found.values())
        if isinstance(found, Mapping)
        else list(found)
        if isinstance(found, list)
        else []
    )
    if not any(isinstance(part, Mapping) and any(part.get(f) for f in fields) for part in parts):
        return None
    stopped = copy.deepcopy(dict(status))
    copied = stopped[entries]
    for part in copied.values() if isinstance(copied, dict) else copied:
        if isinstance(part, dict):
            for name in fields:
                if part.get(name):
                    part[name] = 0
    return stopped


def condition_false(status: Mapping[str, Any], kind: str, reason: str) -> dict[str, Any] | None:
    """``status`` with its ``kind`` condition False (``reason``), None when it is not True."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list) or not any(
        isinstance(c, Mapping) and c.get("type") == kind and c.get("status") == "True"
        for c in conditions
    ):
        return None
    stopped = copy.deepcopy(dict(status))
    for condition in stopped["conditions"]:
        if isinstance(condition, dict) and condition.get("type") == kind:
            condition.update(
                status="False",
                reason=reason,
                message="The copy on the worker cluster is gone",
            )
    return stopped


def field_set(
    status: Mapping[str, Any], name: str, value: object, running: Callable[[object], bool]
) -> dict[str, Any] | None:
    """``status`` with ``name`` at ``value``, None when ``running`` says it already stopped."""
    if not running(status.get(name)):
        return None
    stopped = copy.deepcopy(dict(status))
    if value is None:
        stopped.pop(name, None)
    else:
        stopped[name] = value
    return stopped


__all__ = [
    "SPEC_MANAGED_BY",
    "CopiedWhole",
    "condition_false",
    "copy_for_worker",
    "field_set",
    "managed_by",
    "with_managed_by",
    "zeroed_counts",
]
