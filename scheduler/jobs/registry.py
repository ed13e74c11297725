"""The kinds kuota manages, by framework name and by apiVersion/kind, with their capabilities.

The Configuration's ``integrations.frameworks`` names the integrations that
are enabled (``batch/job`` by default); the webhook, its registrations, the
scheduler's watches and controller, ``kuota validate`` and ``kuota simulate``
find a kind here, and ask it for a capability with :func:`capability`,
never by its name.  The table is filled at import time by
:mod:`scheduler.jobs.kinds` (one line per kind); tests may register their
own kinds.  Registering a kind with :class:`~scheduler.jobs.protocol.AdmissionRules`
also registers those rules with :mod:`scheduler.api.validation` (the API
layer cannot import this one), so ``kuota validate`` reviews the kind
exactly as the webhook does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from scheduler.api import validation
from scheduler.api.field import FieldError
from scheduler.jobs.protocol import (
    NO_FACTS,
    AdmissionRules,
    GroupPodsReadiness,
    Integration,
    JobIntegration,
    PodsReadiness,
)

IntegrationT = TypeVar("IntegrationT", bound=Integration)
C = TypeVar("C")

_BY_FRAMEWORK: dict[str, Integration] = {}
_BY_KIND: dict[tuple[str, str], Integration] = {}
_CAPABILITIES: dict[tuple[str, type[Any]], bool] = {}
"""(framework, capability) -> whether the kind has it: an ``isinstance`` on a protocol
inspects every member, so it is asked once per kind."""


def register(integration: IntegrationT) -> IntegrationT:
    """Add a kind; registering the same framework twice replaces it."""
    unregister(integration.framework)
    _BY_FRAMEWORK[integration.framework] = integration
    _BY_KIND[(integration.api_version, integration.kind)] = integration
    rules = capability(integration, AdmissionRules)
    if rules is not None:

        def validate(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
            if old is None:
                return rules.validate_create(new, facts=NO_FACTS)
            return rules.validate_update(new, old, facts=NO_FACTS)

        # ``kuota validate`` and ``kuota simulate`` review the kind like kuota's own.
        validation.register_namespaced(integration.api_version, integration.kind, validate)
    return integration


def unregister(framework: str) -> None:
    """Remove a kind and its rules (tests that registered their own clean up)."""
    integration = _BY_FRAMEWORK.pop(framework, None)
    for key in [key for key in _CAPABILITIES if key[0] == framework]:
        del _CAPABILITIES[key]
    if integration is not None:
        _BY_KIND.pop((integration.api_version, integration.kind), None)
        validation.unregister_namespaced(integration.api_version, integration.kind)


def capability(integration: Integration, wanted: type[C]) -> C | None:
    """``integration`` as a ``wanted`` capability when it declares it, else None."""
    key = (integration.framework, wanted)
    has = _CAPABILITIES.get(key)
    if has is None:
        has = _CAPABILITIES[key] = isinstance(integration, wanted)
    return integration if has else None  # type: ignore[return-value]


def integrations() -> tuple[Integration, ...]:
    """Every registered kind, in registration order (enabled or not)."""
    return tuple(_BY_FRAMEWORK.values())


def kinds_with(wanted: type[Any]) -> tuple[Integration, ...]:
    """Every registered kind that declares ``wanted``, in registration order."""
    return tuple(i for i in _BY_FRAMEWORK.values() if capability(i, wanted) is not None)


def job_integrations() -> tuple[JobIntegration, ...]:
    """The kinds whose objects get Workloads (the scheduler watches and reconciles them)."""
    found = (capability(i, JobIntegration) for i in _BY_FRAMEWORK.values())
    return tuple(integration for integration in found if integration is not None)


def by_framework(framework: str) -> Integration | None:
    return _BY_FRAMEWORK.get(framework)


def job_integration(framework: str) -> JobIntegration | None:
    """The kind of ``framework`` when its objects get Workloads."""
    integration = _BY_FRAMEWORK.get(framework)
    return capability(integration, JobIntegration) if integration is not None else None


def for_object(raw: Mapping[str, Any]) -> JobIntegration | None:
    """The kind whose Workloads manage this object (by apiVersion and kind), if any: pure."""
    integration = integration_for(raw)
    return capability(integration, JobIntegration) if integration is not None else None


def integration_for(raw: Mapping[str, Any]) -> Integration | None:
    """The registered kind of this object or owner reference, if any: pure."""
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return _BY_KIND.get((api_version, kind))


def readiness_unknown(workload: Mapping[str, Any]) -> bool:
    """Whether the Workload belongs to a kind that cannot say whether its pods are ready (no
    :class:`PodsReadiness` nor :class:`GroupPodsReadiness`): waitForPodsReady then does not
    time it, rather than evict it for a readiness nobody reports
    (docs/concepts.md#pods-ready): pure."""
    metadata = workload.get("metadata")
    references = metadata.get("ownerReferences") if isinstance(metadata, Mapping) else None
    for reference in references or []:
        if not isinstance(reference, Mapping) or not reference.get("controller"):
            continue
        integration = integration_for(reference)
        if integration is None:
            return False
        return (
            capability(integration, PodsReadiness) is None
            and capability(integration, GroupPodsReadiness) is None
        )
    return False


def frameworks() -> tuple[str, ...]:
    return tuple(_BY_FRAMEWORK)


def not_integrated(enabled: Iterable[str]) -> list[str]:
    """The enabled framework names kuota has no integration for (yet), in order: pure.

    Kueue's shipped Configuration enables many frameworks (Kubeflow, Ray,
    ...), and kuota accepts it unchanged; objects of these kinds are then not
    queued at all, which each process reports at start instead of ignoring
    the setting silently.
    """
    return [name for name in enabled if name not in _BY_FRAMEWORK]
