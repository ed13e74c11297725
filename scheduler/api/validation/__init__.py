"""Validation of kuota's API objects (docs/validation.md#rules-by-kind).

One shared library for the webhook server and ``kuota validate``: each
``validate_<kind>(new, old=None)`` takes a raw ``kueue.x-k8s.io/v1beta2``
dict (or a v1beta2 Configuration; job kinds register their own), applies the schema
defaults itself (idempotent), and returns every violation as a
``FieldError`` in the order of the rule tables.  ``old`` given means UPDATE.
The functions are pure and never raise, whatever the input looks like.

``validate(obj, old)`` dispatches on ``apiVersion``/``kind``;
``admission_status(errors)`` renders the webhook's denial.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from scheduler.api.field import FieldError
from scheduler.api.refs import CONFIG_V1BETA2
from scheduler.api.refs import V1BETA2 as KUEUE_V1BETA2
from scheduler.api.validation.admissioncheck import validate_admission_check
from scheduler.api.validation.clusterqueue import validate_cluster_queue
from scheduler.api.validation.cohort import validate_cohort
from scheduler.api.validation.common import FeatureGates
from scheduler.api.validation.configuration import validate_configuration
from scheduler.api.validation.localqueue import validate_local_queue
from scheduler.api.validation.multikueue import (
    validate_multikueue_cluster,
    validate_multikueue_config,
)
from scheduler.api.validation.priorityclass import validate_workload_priority_class
from scheduler.api.validation.render import admission_status
from scheduler.api.validation.resourceflavor import validate_resource_flavor
from scheduler.api.validation.topology import validate_topology
from scheduler.api.validation.workload import validate_workload, validate_workload_status

Validator = Callable[[Mapping[str, Any], Mapping[str, Any] | None], list[FieldError]]


class GatedValidator(Protocol):
    """A validator whose rules read feature gates (``gates``: None means kuota's defaults)."""

    def __call__(
        self,
        new: Mapping[str, Any],
        old: Mapping[str, Any] | None = None,
        *,
        gates: FeatureGates | None = None,
    ) -> list[FieldError]: ...


VALIDATORS: dict[tuple[str, str], Validator] = {
    (KUEUE_V1BETA2, "ClusterQueue"): validate_cluster_queue,
    (KUEUE_V1BETA2, "ResourceFlavor"): validate_resource_flavor,
    (KUEUE_V1BETA2, "LocalQueue"): validate_local_queue,
    (KUEUE_V1BETA2, "Cohort"): validate_cohort,
    (KUEUE_V1BETA2, "Workload"): validate_workload,
    (KUEUE_V1BETA2, "WorkloadPriorityClass"): validate_workload_priority_class,
    (KUEUE_V1BETA2, "AdmissionCheck"): validate_admission_check,
    (KUEUE_V1BETA2, "MultiKueueConfig"): validate_multikueue_config,
    (KUEUE_V1BETA2, "MultiKueueCluster"): validate_multikueue_cluster,
    (KUEUE_V1BETA2, "Topology"): validate_topology,
    (CONFIG_V1BETA2, "Configuration"): validate_configuration,
}
"""(apiVersion, kind) → validator, for every kind this package validates.

The job kinds (batch/v1 Job, JobSet, ...) are added by
:func:`scheduler.jobs.registry.register`, through :func:`register_namespaced`:
their rules live with their integration, in the jobs layer above this one.
"""
GATED: dict[tuple[str, str], GatedValidator] = {
    (KUEUE_V1BETA2, "ClusterQueue"): validate_cluster_queue,
    (KUEUE_V1BETA2, "Workload"): validate_workload,
}
"""The kinds whose rules read feature gates, and their validators (``gates=`` keyword)."""
NAMESPACED: set[tuple[str, str]] = set()
"""(apiVersion, kind) of the registered namespaced kinds (the pipeline fills their namespace)."""


def register_namespaced(api_version: str, kind: str, validator: Validator) -> None:
    """Add a namespaced kind and its validator (a job integration's admission rules)."""
    VALIDATORS[(api_version, kind)] = validator
    NAMESPACED.add((api_version, kind))


def unregister_namespaced(api_version: str, kind: str) -> None:
    """Remove a kind added by :func:`register_namespaced`."""
    VALIDATORS.pop((api_version, kind), None)
    NAMESPACED.discard((api_version, kind))


def validate(obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[FieldError]:
    """Validate any supported object by its ``apiVersion``/``kind``: pure.

    Raises ``ValueError`` for an object of another version or kind (legacy
    and v1beta1 objects must be converted first); the caller decides what
    that means (the CLI prints a note, the webhook answers 400).
    """
    api_version = obj.get("apiVersion") if isinstance(obj, Mapping) else None
    kind = obj.get("kind") if isinstance(obj, Mapping) else None
    validator = (
        VALIDATORS.get((api_version, kind))
        if isinstance(api_version, str) and isinstance(kind, str)
        else None
    )
    if validator is None:
        raise ValueError(
            f"kuota cannot validate apiVersion {api_version!r} kind {kind!r}: not a supported "
            "v1beta2 kind"
        )
    return validator(obj, old)


__all__ = [
    "FieldError",
    "admission_status",
    "validate",
    "validate_admission_check",
    "validate_cluster_queue",
    "validate_cohort",
    "validate_configuration",
    "register_namespaced",
    "unregister_namespaced",
    "validate_local_queue",
    "validate_multikueue_cluster",
    "validate_multikueue_config",
    "validate_resource_flavor",
    "validate_topology",
    "validate_workload",
    "validate_workload_priority_class",
    "validate_workload_status",
]
