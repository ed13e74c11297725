"""What the webhook may ask the cluster, as a small protocol.

Job mutation needs three facts the AdmissionReview does not carry: whether
the namespace has a LocalQueue named ``default``, the namespace's labels
(for ``managedJobsNamespaceSelector``) and the owners of a Job (to leave the
children of a managed JobSet to their parent).  The decision code takes a
:class:`ClusterLookup` argument and stays pure of any client; the one
adapter that talks to an API server is :mod:`webhook.kube_lookup`, and tests
pass :class:`StaticLookup`.

A lookup either answers or raises :class:`LookupFailed` (the API server could
not be asked); "not found" is an answer (``None``/``False``), not a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class LookupFailed(RuntimeError):
    """The cluster could not be asked (timeout, connection refused, 5xx, forbidden)."""


class ClusterLookup(Protocol):
    async def has_default_local_queue(self, namespace: str) -> bool:
        """Whether LocalQueue ``<namespace>/default`` exists."""
        ...

    async def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        """The namespace's labels, or None when it does not exist."""
        ...

    async def get_object(
        self, api_version: str, kind: str, namespace: str, name: str
    ) -> Mapping[str, Any] | None:
        """A namespaced object (an owner), or None when it does not exist."""
        ...


@dataclass
class StaticLookup:
    """A cluster described by plain data: for tests, benchmarks and ``--no-cluster-lookups``.

    ``namespaces`` maps a namespace to its labels (an unknown namespace gets
    ``kubernetes.io/metadata.name`` only, as the API server always sets it);
    ``objects`` maps (apiVersion, kind, namespace, name) to an object.
    """

    default_queues: set[str] = field(default_factory=set)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    objects: dict[tuple[str, str, str, str], Mapping[str, Any]] = field(default_factory=dict)
    failing: bool = False
    calls: int = 0

    def _touch(self) -> None:
        self.calls += 1
        if self.failing:
            raise LookupFailed("the API server is unreachable (StaticLookup.failing)")

    async def has_default_local_queue(self, namespace: str) -> bool:
        self._touch()
        return namespace in self.default_queues

    async def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        self._touch()
        return self.namespaces.get(namespace, {"kubernetes.io/metadata.name": namespace})

    async def get_object(
        self, api_version: str, kind: str, namespace: str, name: str
    ) -> Mapping[str, Any] | None:
        self._touch()
        return self.objects.get((api_version, kind, namespace, name))
