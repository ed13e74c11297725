"""Which jobs each job controls, for the kinds decided through a child they scale.

An elastic, autoscaling RayJob's counts are those of the RayCluster KubeRay
made for it (:class:`~scheduler.jobs.ScaledThroughChild`,
docs/concepts.md#elastic-jobs).  The cluster state keeps, per controller
UID, the jobs it controls, so the job controller can read that child, and
says which owner to decide again when such a child changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api import objects
from scheduler.jobs import ScaledThroughChild, capability, registry


class ChildJobs:
    """The jobs each job controls, by UID (module docstring)."""

    def __init__(self, jobs: Mapping[str, Mapping[str, Any]]) -> None:
        self._jobs = jobs
        """The cluster state's jobs by UID (read here, never written)."""
        self._children: dict[str, set[str]] = {}
        """Controller UID -> the UIDs of the jobs it controls."""

    def on_job(self, uid: str, obj: Mapping[str, Any], *, deleted: bool) -> str | None:
        """Record a job seen or gone; the UID of its owner to decide again, if it scales
        through this child."""
        controller = objects.controller_reference(obj)
        owner = str(controller.get("uid") or "") if controller is not None else ""
        if not owner:
            return None
        if deleted:
            kept = self._children.get(owner, set())
            kept.discard(uid)
            if not kept:
                self._children.pop(owner, None)
        else:
            self._children.setdefault(owner, set()).add(uid)
        parent = self._jobs.get(owner)
        kind = registry.for_object(parent) if parent is not None else None
        if kind is None or capability(kind, ScaledThroughChild) is None:
            return None
        return owner

    def named(self, owner_key: str, name: str) -> Mapping[str, Any] | None:
        """The job named ``name`` that the job ``owner_key`` controls, as stored."""
        for uid in self._children.get(owner_key, ()):
            child = self._jobs.get(uid)
            if child is not None and objects.name(child) == name:
                return child
        return None
