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
_OWN_DECISIONS: set[str] = set()
"""Frameworks whose kind has its own webhook and controller decisions (``pod``: a Pod
cannot be suspended); the generic webhook decision, its registrations and the
generic watches leave them out (:func:`suspendable`)."""
_THROUGH_PODS: set[str] = set()
"""Frameworks with no integration of their own whose pods are queued (``deployment``)."""


def register_through_pods(framework: str) -> str:
    """Name a framework whose objects are queued through their pods (the ``pod`` integration)."""
    _THROUGH_PODS.add(framework)
    return framework


def register(integration: JobIntegration, *, own_decisions: bool = False) -> JobIntegration:
    """Add an integration; registering the same framework twice replaces it.

    ``own_decisions``: the kind does not follow the suspend protocol and is
    served by its own webhook module and controller decision (the pod family);
    it is still found by :func:`for_object` and :func:`by_framework`, but has
    no admission rules (no validating webhook), so ``kuota validate`` does not
    claim to review it.
    """
    previous = _BY_FRAMEWORK.get(integration.framework)
    if previous is not None:
        _BY_KIND.pop((previous.api_version, previous.kind), None)
        validation.unregister_namespaced(previous.api_version, previous.kind)
    _BY_FRAMEWORK[integration.framework] = integration
    _BY_KIND[(integration.api_version, integration.kind)] = integration
    if own_decisions:
        _OWN_DECISIONS.add(integration.framework)
        return integration
    _OWN_DECISIONS.discard(integration.framework)

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
    _OWN_DECISIONS.discard(framework)
    if integration is not None:
        _BY_KIND.pop((integration.api_version, integration.kind), None)
        validation.unregister_namespaced(integration.api_version, integration.kind)


def integrations() -> tuple[JobIntegration, ...]:
    """Every registered integration, in registration order (enabled or not)."""
    return tuple(_BY_FRAMEWORK.values())


def suspendable() -> tuple[JobIntegration, ...]:
    """The integrations served by the generic webhook decision, registrations and watches.

    Every registered one but those with their own decisions (``pod``), in order.
    """
    return tuple(i for name, i in _BY_FRAMEWORK.items() if name not in _OWN_DECISIONS)


def has_own_decisions(integration: JobIntegration) -> bool:
    """Whether the integration is served by its own webhook and controller decisions."""
    return integration.framework in _OWN_DECISIONS


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
    return [name for name in enabled if name not in _BY_FRAMEWORK and name not in _THROUGH_PODS]
