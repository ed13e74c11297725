"""The objects jobs refer to for their pod sets, and which jobs to decide again when one changes.

A TrainJob's pod sets come from the runtime it names
(:class:`~scheduler.jobs.ResolvedThroughReference`, docs/concepts.md#trainjob).
The cluster state keeps every object of the referenced kinds as watched, so
the job controller resolves a job without a read, and says which jobs name
an object that appeared, changed or went.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api import objects
from scheduler.jobs import Reference, ResolvedThroughReference, capability, registry
from scheduler.kube.informer import Event

ObjectKey = tuple[str, str, str | None, str]
"""(apiVersion, kind, namespace or None when cluster-scoped, name)."""


def _key_of_reference(reference: Reference) -> ObjectKey:
    return (reference.api_version, reference.kind, reference.namespace, reference.name)


class ReferencedObjects:
    """The watched objects of every referenced kind (module docstring)."""

    def __init__(self, jobs: Mapping[str, Mapping[str, Any]]) -> None:
        self._jobs = jobs
        """The cluster state's jobs by UID (read here, never written)."""
        self._objects: dict[ObjectKey, dict[str, Any]] = {}

    def on_event(self, event: Event) -> list[str]:
        """Record an object seen or gone; the UIDs of the jobs that name it."""
        obj = event.object
        key: ObjectKey = (
            str(obj.get("apiVersion", "")),
            str(obj.get("kind", "")),
            objects.namespace(obj) or None,
            objects.name(obj),
        )
        if event.type == "DELETED":
            self._objects.pop(key, None)
        else:
            self._objects[key] = dict(obj)
        return [uid for uid, job in self._jobs.items() if self._names(job) == key]

    def get(self, reference: Reference) -> Mapping[str, Any] | None:
        """The object ``reference`` names, as last seen; None when it is not there."""
        return self._objects.get(_key_of_reference(reference))

    @staticmethod
    def _names(job: Mapping[str, Any]) -> ObjectKey | None:
        kind = registry.for_object(job)
        resolver = capability(kind, ResolvedThroughReference) if kind is not None else None
        reference = resolver.reference(job) if resolver is not None else None
        return _key_of_reference(reference) if reference is not None else None
