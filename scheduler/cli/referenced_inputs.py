"""The objects ``kuota simulate`` reads for the jobs that name them (a TrainJob's runtime).

A TrainJob's pod sets come from the runtime it names
(docs/concepts.md#trainjob), so a simulation of TrainJobs needs their
ClusterTrainingRuntimes or TrainingRuntimes among its inputs, as the cluster
needs them.  A job whose object is missing is an input error that names
it, never a job silently left out.  Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.api import objects
from scheduler.cli.loader import Document
from scheduler.jobs import JobIntegration, ResolvedThroughReference, capability, kinds_with


def referenced_kinds() -> frozenset[tuple[str, str]]:
    """(apiVersion, kind) of every kind a registered kind refers to for its pod sets."""
    found = set()
    for integration in kinds_with(ResolvedThroughReference):
        resolver = capability(integration, ResolvedThroughReference)
        for kind in resolver.referenced_kinds if resolver is not None else ():
            found.add((kind.api_version, kind.kind))
    return frozenset(found)


class ReferencedInputs:
    """The input documents of the referenced kinds, by apiVersion, kind and name."""

    def __init__(self, documents: Sequence[Document]) -> None:
        kinds = referenced_kinds()
        self._by_name: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
        for document in documents:
            raw = document.raw
            key = (str(raw.get("apiVersion")), str(raw.get("kind")))
            if key in kinds:
                self._by_name.setdefault((*key, objects.name(raw)), []).append(raw)

    @staticmethod
    def holds(raw: Mapping[str, Any]) -> bool:
        """Whether ``raw`` is of a referenced kind (read here, not simulated itself)."""
        return (str(raw.get("apiVersion")), str(raw.get("kind"))) in referenced_kinds()

    def resolve(
        self, job: Mapping[str, Any], integration: JobIntegration
    ) -> tuple[dict[str, Any], str | None]:
        """The job resolved against the input it names, or the problem naming what is missing."""
        resolver = capability(integration, ResolvedThroughReference)
        if resolver is None:
            return dict(job), None
        reference = resolver.reference(job)
        name = f"{job.get('kind')}/{objects.name(job)}"
        if reference is None:
            return dict(job), f"{name}: names no object kuota can read its pod sets from"
        for candidate in self._by_name.get(
            (reference.api_version, reference.kind, reference.name), []
        ):
            if reference.namespace not in (None, objects.namespace(candidate) or "default"):
                continue
            errors = resolver.referenced_errors(candidate)
            if errors:
                return dict(job), "; ".join(
                    f"{reference.kind}/{reference.name} (named by {name}): {error}"
                    for error in errors
                )
            return resolver.resolved(job, candidate), None
        where = f" in namespace {reference.namespace}" if reference.namespace else ""
        return dict(job), (
            f"{name}: its {reference.kind} {reference.name}{where} is not among the inputs "
            "(its pod sets come from it)"
        )
