"""The object an admission request is about, checked against the kind the endpoint serves."""

from __future__ import annotations

from typing import Any

from scheduler.api import objects
from scheduler.jobs import Integration
from webhook.review import AdmissionRequest, BadRequest


def object_of_request(request: AdmissionRequest, integration: Integration) -> dict[str, Any]:
    """The request's object; BadRequest when it is not of this kind or lacks its namespace.

    Every kind kuota queues is namespaced: the request's namespace (else the
    object's) must be set.
    """
    served = (integration.group, integration.api_version.rpartition("/")[2], integration.kind)
    if request.kind != served:
        group, version, kind = request.kind
        raise BadRequest(
            f"this endpoint serves {integration.api_version} {integration.kind}, "
            f"got {group + '/' if group else ''}{version} {kind}"
        )
    if request.object is None:
        raise BadRequest(f"request.object is missing for {request.operation}")
    namespace = request.namespace or objects.namespace(request.object)
    if not isinstance(namespace, str) or not namespace:
        raise BadRequest(f"a {integration.kind} is namespaced: request.namespace is missing")
    return request.object


def namespace_of_request(request: AdmissionRequest) -> str:
    """The namespace of a request :func:`object_of_request` accepted."""
    return request.namespace or objects.namespace(request.object or {}) or ""
