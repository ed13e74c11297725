"""The visibility API's JSON, as Kueue v0.19.2 serves it: pure.

See docs/visibility.md#the-api.  Group ``visibility.kueue.x-k8s.io``,
versions ``v1beta2`` (preferred) and ``v1beta1``, identical in shape: the
resources ``clusterqueues`` (cluster scope) and ``localqueues`` (namespaced)
have no verb of their own, only the subresource ``pendingworkloads`` answers
``get`` with a ``PendingWorkloadsSummary``.  Query parameters ``limit``
(default 1000; 0 means the default; clamped to 0..100,000) and ``offset``
(default 0; a negative one is 0).  Errors are ``Status`` objects with the
reasons and messages the Kubernetes API machinery gives, so clients
(kubectl, client-go, kueuectl) recognise NotFound, Forbidden, BadRequest and
Unauthorized.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

GROUP: Final = "visibility.kueue.x-k8s.io"
VERSIONS: Final = ("v1beta2", "v1beta1")
"""Served versions, preferred first."""
SUMMARY_KIND: Final = "PendingWorkloadsSummary"
SUBRESOURCE: Final = "pendingworkloads"
DEFAULT_LIMIT: Final = 1000
MAX_LIMIT: Final = 100_000
INT64_MAX: Final = 2**63 - 1


@dataclass(frozen=True, slots=True)
class QueueResource:
    """One of the two resources whose ``pendingworkloads`` are served."""

    plural: str
    singular: str
    namespaced: bool


CLUSTER_QUEUES: Final = QueueResource("clusterqueues", "clusterqueue", namespaced=False)
LOCAL_QUEUES: Final = QueueResource("localqueues", "localqueue", namespaced=True)
RESOURCES: Final = (CLUSTER_QUEUES, LOCAL_QUEUES)


class BadRequest(ValueError):
    """A query the API refuses (HTTP 400), with the message the caller reads."""


@dataclass(frozen=True, slots=True)
class Page:
    """Which part of a queue is asked for: ``offset`` places skipped, ``limit`` at most."""

    offset: int
    limit: int


def _int64(name: str, text: str) -> int:
    """A query parameter as a signed 64-bit integer (Go's ``strconv.ParseInt``): pure."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits.isascii() or not digits.isdigit():
        raise BadRequest(f'{name}: strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise BadRequest(f'{name}: strconv.ParseInt: parsing "{text}": value out of range')
    return value


def page_of(query: Mapping[str, str]) -> Page:
    """The page a request's query asks for, bounded as Kueue bounds it: pure.

    Raises :class:`BadRequest` for a ``limit`` or ``offset`` that is not an integer.
    Other parameters are not the API's and are left to the HTTP layer (as the API
    server's parameter codec leaves them).
    """
    limit = _int64("limit", query["limit"]) if "limit" in query else 0
    offset = _int64("offset", query["offset"]) if "offset" in query else 0
    if limit == 0:
        limit = DEFAULT_LIMIT
    return Page(offset=max(offset, 0), limit=min(max(limit, 0), MAX_LIMIT))


@dataclass(slots=True)  # not frozen: a page makes a thousand, and frozen init is slow
class PendingWorkload:
    """What the API tells about one pending Workload (docs/visibility.md#the-api)."""

    name: str
    namespace: str
    creation_timestamp: str | None
    owner_references: tuple[Mapping[str, Any], ...]
    priority: int
    local_queue: str
    position_in_cluster_queue: int
    position_in_local_queue: int

    def json(self) -> dict[str, Any]:
        """The item as Kueue serializes it (Go's field order; empty owners left out): pure."""
        metadata: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "creationTimestamp": self.creation_timestamp,
        }
        if self.owner_references:
            metadata["ownerReferences"] = [
                {key: ref[key] for key in ("apiVersion", "kind", "name", "uid") if key in ref}
                for ref in self.owner_references
            ]
        return {
            "metadata": metadata,
            "priority": self.priority,
            "localQueueName": self.local_queue,
            "positionInClusterQueue": self.position_in_cluster_queue,
            "positionInLocalQueue": self.position_in_local_queue,
        }


def summary(version: str, items: Sequence[PendingWorkload]) -> dict[str, Any]:
    """A ``PendingWorkloadsSummary`` of ``items`` in ``version``: pure."""
    return {
        "kind": SUMMARY_KIND,
        "apiVersion": f"{GROUP}/{version}",
        "metadata": {"creationTimestamp": None},
        "items": [item.json() for item in items],
    }


# --- Status objects --------------------------------------------------------------------------


def status(
    code: int, reason: str, message: str, details: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A ``v1.Status`` failure as the API machinery writes it: pure."""
    answer: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        answer["details"] = dict(details)
    answer["code"] = code
    return answer


def not_found(resource: QueueResource, name: str) -> dict[str, Any]:
    """The queue ``name`` is unknown (Kueue names the resource in the singular): pure."""
    return status(
        404,
        "NotFound",
        f'{resource.singular}.{GROUP} "{name}" not found',
        {"name": name, "group": GROUP, "kind": resource.singular},
    )


def forbidden(
    resource: QueueResource, name: str, namespace: str | None, user: str, reason: str
) -> dict[str, Any]:
    """The caller may not ``get`` this ``pendingworkloads`` (RBAC said no): pure."""
    scope = f'in the namespace "{namespace}"' if namespace is not None else "at the cluster scope"
    message = (
        f'{resource.plural}.{GROUP} "{name}" is forbidden: User "{user}" cannot get resource '
        f'"{resource.plural}/{SUBRESOURCE}" in API group "{GROUP}" {scope}'
    )
    if reason:
        message += f": {reason}"
    return status(
        403, "Forbidden", message, {"name": name, "group": GROUP, "kind": resource.plural}
    )


def method_not_allowed() -> dict[str, Any]:
    return status(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
    )


def unauthorized() -> dict[str, Any]:
    return status(401, "Unauthorized", "Unauthorized")


def bad_request(message: str) -> dict[str, Any]:
    return status(400, "BadRequest", message)


def page_not_found() -> dict[str, Any]:
    return status(404, "NotFound", "the server could not find the requested resource")


def internal_error(message: str) -> dict[str, Any]:
    return status(500, "InternalError", f"Internal error occurred: {message}")


__all__ = [
    "CLUSTER_QUEUES",
    "DEFAULT_LIMIT",
    "GROUP",
    "LOCAL_QUEUES",
    "MAX_LIMIT",
    "RESOURCES",
    "SUBRESOURCE",
    "SUMMARY_KIND",
    "VERSIONS",
    "BadRequest",
    "Page",
    "PendingWorkload",
    "QueueResource",
    "bad_request",
    "forbidden",
    "internal_error",
    "method_not_allowed",
    "not_found",
    "page_not_found",
    "page_of",
    "status",
    "summary",
    "unauthorized",
]
