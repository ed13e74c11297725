"""Job integrations by framework name and by apiVersion/kind.

The Configuration's ``integrations.frameworks`` names the integrations that
are enabled (``batch/job`` by default); the webhook and the reconciler find
the integration of an incoming object by its apiVersion and kind.  The
registry is a plain module-level table filled at import time by the
integrations shipped with kuota; tests may register their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from scheduler.jobs.base import JobIntegration

_BY_FRAMEWORK: dict[str, JobIntegration] = {}
_BY_KIND: dict[tuple[str, str], JobIntegration] = {}
_THROUGH_PODS: set[str] = set()
"""Frameworks with no integration of their own whose pods are queued (``deployment``)."""


def register_through_pods(framework: str) -> str:
    """Name a framework whose objects are queued through their pods (the ``pod`` integration)."""
    _THROUGH_PODS.add(framework)
    return framework


def register(integration: JobIntegration) -> JobIntegration:
    """Add an integration; registering the same framework twice replaces it."""
    previous = _BY_FRAMEWORK.get(integration.framework)
    if previous is not None:
        _BY_KIND.pop((previous.api_version, previous.kind), None)
    _BY_FRAMEWORK[integration.framework] = integration
    _BY_KIND[(integration.api_version, integration.kind)] = integration
    return integration


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
