"""Job integrations by framework name and by apiVersion/kind.

The Configuration's ``integrations.frameworks`` names the integrations that
are enabled (``batch/job`` by default); the webhook and the reconciler find
the integration of an incoming object by its apiVersion and kind.  The
registry is a plain module-level table filled at import time by the
integrations shipped with kuota; tests may register their own.  Registering
an integration also registers its admission rules with
:mod:`scheduler.api.validation` (the API layer cannot import the jobs layer),
so ``kuota validate`` reviews the kind exactly as the webhook does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from scheduler.api import validation
from scheduler.api.field import FieldError
from scheduler.jobs.base import NO_FACTS, JobIntegration

_BY_FRAMEWORK: dict[str, JobIntegration] = {}
_BY_KIND: dict[tuple[str, str], JobIntegration] = {}


def register(integration: JobIntegration) -> JobIntegration:
    """Add an integration; registering the same framework twice replaces it."""
    previous = _BY_FRAMEWORK.get(integration.framework)
    if previous is not None:
        _BY_KIND.pop((previous.api_version, previous.kind), None)
        validation.unregister_namespaced(previous.api_version, previous.kind)
    _BY_FRAMEWORK[integration.framework] = integration
    _BY_KIND[(integration.api_version, integration.kind)] = integration

    def validate(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
        if old is None:
            return integration.validate_create(new, facts=NO_FACTS)
        return integration.validate_update(new, old, facts=NO_FACTS)

    # ``kuota validate`` and ``kuota simulate`` review the kind like kuota's own.
    validation.register_namespaced(integration.api_version, integration.kind, validate)
    return integration


def unregister(framework: str) -> None:
    """Remove an integration and its rules (tests that registered their own clean up)."""
    integration = _BY_FRAMEWORK.pop(framework, None)
    if integration is not None:
        _BY_KIND.pop((integration.api_version, integration.kind), None)
        validation.unregister_namespaced(integration.api_version, integration.kind)


def integrations() -> tuple[JobIntegration, ...]:
    """Every registered integration, in registration order (enabled or not)."""
    return tuple(_BY_FRAMEWORK.values())


def by_framework(framework: str) -> JobIntegration | None:
    return _BY_FRAMEWORK.get(framework)


def for_object(raw: Mapping[str, Any]) -> JobIntegration | None:
    """The integration that manages this object (by apiVersion and kind), if any: pure."""
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return _BY_KIND.get((api_version, kind))


def frameworks() -> tuple[str, ...]:
    return tuple(_BY_FRAMEWORK)


def not_integrated(enabled: Iterable[str]) -> list[str]:
    """The enabled framework names kuota has no integration for (yet), in order: pure.

    Kueue's shipped Configuration enables many frameworks (Kubeflow, Ray,
    Pods, Deployments, ...), and kuota accepts it unchanged; objects of these
    kinds are then not queued at all, which each process reports at start
    instead of ignoring the setting silently.
    """
    return [name for name in enabled if name not in _BY_FRAMEWORK]
