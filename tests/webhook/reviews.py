"""AdmissionReview and ConversionReview bodies shaped exactly as kube-apiserver sends them.

The shape (``request.kind``/``resource``/``requestKind``, ``userInfo``,
``options``, ``dryRun``) follows what the API server of the local cluster
sends for ``kubectl create``/``patch``; only the object varies per test.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from tests import builders
from tests.builders import container

ADMIN = {"username": "kuota-admin", "groups": ["system:masters", "system:authenticated"]}
SCHEDULER = {
    "username": "system:serviceaccount:kueue-system:kuota-scheduler",
    "uid": "0c3f",
    "groups": [
        "system:serviceaccounts",
        "system:serviceaccounts:kueue-system",
        "system:authenticated",
    ],
}
QUEUE = "kueue.x-k8s.io/queue-name"


def job(
    name: str = "sample-job",
    namespace: str = "team-a",
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    suspend: bool | None = False,
    **metadata: Any,
) -> dict[str, Any]:
    """A batch/v1 Job as the API server sends it (defaults filled in)."""
    main = {**container("main", requests={"cpu": "1"}), "args": ["sleep", "1"]}
    built = builders.job(name, namespace).containers(main).suspend(suspend).server_defaults()
    built.metadata.update(metadata)
    if labels:
        built.labels(labels)
    if annotations:
        built.annotations(annotations)
    return built.build()


def admission_review(
    obj: dict[str, Any] | None,
    *,
    operation: str = "CREATE",
    old: dict[str, Any] | None = None,
    user: dict[str, Any] = ADMIN,
    dry_run: bool = False,
    namespace: str | None = None,
    group_version_kind: tuple[str, str, str] | None = None,
    sub_resource: str | None = None,
) -> dict[str, Any]:
    source = obj if obj is not None else old or {}
    if group_version_kind is None:
        api_version = str(source.get("apiVersion", "batch/v1"))
        group, _, version = api_version.rpartition("/")
        group_version_kind = (group, version, str(source.get("kind", "Job")))
    group, version, kind = group_version_kind
    resource = {
        "group": group,
        "version": version,
        "resource": kind.lower() + ("es" if kind.endswith("s") else "s"),
    }
    metadata = source.get("metadata", {}) if isinstance(source.get("metadata"), dict) else {}
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": resource,
        "requestKind": {"group": group, "version": version, "kind": kind},
        "requestResource": resource,
        "name": metadata.get("name", ""),
        "operation": operation,
        "userInfo": copy.deepcopy(user),
        "object": copy.deepcopy(obj),
        "oldObject": copy.deepcopy(old),
        "dryRun": dry_run,
        "options": {
            "kind": f"{operation.title()}Options",
            "apiVersion": "meta.k8s.io/v1",
            "fieldManager": "kubectl-client-side-apply",
        },
    }
    ns = namespace if namespace is not None else metadata.get("namespace")
    if ns:
        request["namespace"] = ns
    if sub_resource:
        request["subResource"] = sub_resource
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": request}


def conversion_review(objects: list[Any], desired: str) -> dict[str, Any]:
    return {
        "kind": "ConversionReview",
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": {
            "uid": str(uuid.uuid4()),
            "desiredAPIVersion": desired,
            "objects": copy.deepcopy(objects),
        },
    }
