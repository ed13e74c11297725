"""What the visibility API says about itself: discovery and the OpenAPI v2 document: pure.

See docs/visibility.md#discovery-and-openapi.  The API server's aggregator
reads ``/apis`` (an ``APIGroupList``; kuota offers no aggregated discovery
document, so the aggregator falls back to ``/apis/<group>/<version>``),
``/apis/<group>/<version>`` (an ``APIResourceList``: ``clusterqueues`` and
``localqueues`` with no verb, their ``pendingworkloads`` with ``get``) and
``/openapi/v2``, which it merges into the cluster's document that kubectl
and every client read.  Every ``$ref`` of that document points at a
definition in the same document, so the merged one stays resolvable.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

from scheduler.visibility.wire import GROUP, RESOURCES, SUBRESOURCE, SUMMARY_KIND, VERSIONS

META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1"
MODELS: Final = "io.k8s.kueue.visibility"
"""Prefix of the definitions of the API's own types (``<prefix>.<version>.<Kind>``)."""


def _group_version(version: str) -> dict[str, str]:
    return {"groupVersion": f"{GROUP}/{version}", "version": version}


def api_group() -> dict[str, Any]:
    """``/apis/visibility.kueue.x-k8s.io``: pure."""
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": GROUP,
        "versions": [_group_version(version) for version in VERSIONS],
        "preferredVersion": _group_version(VERSIONS[0]),
    }


def api_group_list() -> dict[str, Any]:
    """``/apis``: the one group this server serves: pure."""
    group = api_group()
    del group["kind"], group["apiVersion"]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [group]}


def api_resource_list(version: str) -> dict[str, Any]:
    """``/apis/visibility.kueue.x-k8s.io/<version>``: pure."""
    resources: list[dict[str, Any]] = []
    for resource in RESOURCES:
        common = {"namespaced": resource.namespaced, "kind": SUMMARY_KIND}
        resources.append(
            {"name": resource.plural, "singularName": resource.singular, **common, "verbs": []}
        )
        resources.append(
            {
                "name": f"{resource.plural}/{SUBRESOURCE}",
                "singularName": "",
                **common,
                "verbs": ["get"],
            }
        )
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{GROUP}/{version}",
        "resources": resources,
    }


# --- OpenAPI v2 ------------------------------------------------------------------------------


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/definitions/{name}"}


def _int32(description: str) -> dict[str, Any]:
    return {"description": description, "type": "integer", "format": "int32"}


def _meta_definitions() -> dict[str, Any]:
    """The part of the apimachinery types the API's objects use."""
    string = {"type": "string"}
    return {
        f"{META}.Time": {
            "description": "A timestamp, RFC 3339 in UTC (seconds).",
            "type": "string",
            "format": "date-time",
        },
        f"{META}.OwnerReference": {
            "description": "Who owns the object (for a pending Workload: its job).",
            "type": "object",
            "required": ["apiVersion", "kind", "name", "uid"],
            "properties": {
                "apiVersion": string,
                "kind": string,
                "name": string,
                "uid": string,
                "controller": {"type": "boolean"},
                "blockOwnerDeletion": {"type": "boolean"},
            },
            "x-kubernetes-map-type": "atomic",
        },
        f"{META}.ObjectMeta": {
            "description": "Standard object metadata (the fields this API fills).",
            "type": "object",
            "properties": {
                "name": string,
                "namespace": string,
                "creationTimestamp": _ref(f"{META}.Time"),
                "ownerReferences": {
                    "type": "array",
                    "items": {"default": {}, **_ref(f"{META}.OwnerReference")},
                    "x-kubernetes-list-map-keys": ["uid"],
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-patch-merge-key": "uid",
                    "x-kubernetes-patch-strategy": "merge",
                },
            },
        },
    }


def _model_definitions(version: str) -> dict[str, Any]:
    prefix = f"{MODELS}.{version}"
    return {
        f"{prefix}.PendingWorkload": {
            "description": "A pending Workload and its places in its ClusterQueue and LocalQueue.",
            "type": "object",
            "required": [
                "priority",
                "localQueueName",
                "positionInClusterQueue",
                "positionInLocalQueue",
            ],
            "properties": {
                "metadata": {"default": {}, **_ref(f"{META}.ObjectMeta")},
                "priority": _int32("The Workload's priority."),
                "localQueueName": {
                    "description": "The LocalQueue the Workload was submitted to.",
                    "type": "string",
                },
                "positionInClusterQueue": _int32("Place in the ClusterQueue, from 0."),
                "positionInLocalQueue": _int32("Place in the LocalQueue, from 0."),
            },
        },
        f"{prefix}.{SUMMARY_KIND}": {
            "description": "Pending Workloads of a ClusterQueue or LocalQueue, in queue order.",
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"default": {}, **_ref(f"{META}.ObjectMeta")},
                "items": {
                    "type": "array",
                    "items": {"default": {}, **_ref(f"{prefix}.PendingWorkload")},
                },
            },
            "x-kubernetes-group-version-kind": [
                {"group": GROUP, "kind": SUMMARY_KIND, "version": version}
            ],
        },
    }


def _operation(version: str, plural: str, namespaced: bool) -> dict[str, Any]:
    kind = "Namespaced" if namespaced else ""
    singular = "LocalQueue" if plural == "localqueues" else "ClusterQueue"
    tag = f"visibilityKueueXK8sIo_{version}"
    camel_version = version[0].upper() + version[1:]
    query = [
        {
            "uniqueItems": True,
            "type": "integer",
            "format": "int64",
            "description": description,
            "name": name,
            "in": "query",
        }
        for name, description in (
            ("limit", "Most pending workloads to return (default 1000, at most 100000)."),
            ("offset", "Place of the first pending workload to return, from 0."),
        )
    ]
    return {
        "description": f"read the pending workloads of the specified {singular}",
        "consumes": ["*/*"],
        "produces": ["application/json"],
        "schemes": ["https"],
        "tags": [tag],
        "operationId": (
            f"readVisibilityKueueXK8sIo{camel_version}{kind}{singular}PendingWorkloads"
        ),
        "parameters": query,
        "responses": {
            "200": {
                "description": "OK",
                "schema": _ref(f"{MODELS}.{version}.{SUMMARY_KIND}"),
            },
            "401": {"description": "Unauthorized"},
        },
        "x-kubernetes-action": "get",
        "x-kubernetes-group-version-kind": {
            "group": GROUP,
            "kind": SUMMARY_KIND,
            "version": version,
        },
    }


def _paths() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for version in VERSIONS:
        for resource in RESOURCES:
            parameters: list[dict[str, Any]] = [
                {
                    "uniqueItems": True,
                    "type": "string",
                    "description": f"name of the {resource.singular}",
                    "name": "name",
                    "in": "path",
                    "required": True,
                }
            ]
            scope = ""
            if resource.namespaced:
                scope = "namespaces/{namespace}/"
                parameters.append(
                    {
                        "uniqueItems": True,
                        "type": "string",
                        "description": "object name and auth scope, such as for teams and projects",
                        "name": "namespace",
                        "in": "path",
                        "required": True,
                    }
                )
            path = f"/apis/{GROUP}/{version}/{scope}{resource.plural}/{{name}}/{SUBRESOURCE}"
            paths[path] = {
                "get": _operation(version, resource.plural, resource.namespaced),
                "parameters": parameters,
            }
    return paths


def openapi_v2(title: str, version: str) -> dict[str, Any]:
    """The whole OpenAPI v2 document: pure."""
    definitions = _meta_definitions()
    for api_version in VERSIONS:
        definitions.update(_model_definitions(api_version))
    return {
        "swagger": "2.0",
        "info": {"title": title, "version": version},
        "paths": _paths(),
        "definitions": definitions,
    }


def encoded(document: dict[str, Any]) -> tuple[bytes, str]:
    """(JSON bytes, strong ETag) of a document served as is: pure."""
    body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    return body, '"' + hashlib.sha512(body).hexdigest()[:32].upper() + '"'


def unresolved_refs(document: dict[str, Any]) -> list[str]:
    """Every local ``$ref`` of ``document`` (``#/definitions/...``, ``#/parameters/...``) that
    points at nothing in it: pure."""
    missing: list[str] = []

    def resolves(ref: str) -> bool:
        node: Any = document
        for part in ref.removeprefix("#/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/") and not resolves(ref):
                missing.append(ref)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    return missing


__all__ = [
    "api_group",
    "api_group_list",
    "api_resource_list",
    "encoded",
    "openapi_v2",
    "unresolved_refs",
]
