"""The APIServices that register the visibility API with the API server's aggregator: pure.

See docs/visibility.md#installation.  One ``APIService`` per served version
(``v1beta2.visibility.kueue.x-k8s.io``, ``v1beta1.visibility.kueue.x-k8s.io``),
both pointing at the same Service, with Kueue's priorities.  Unlike Kueue's
install, which skips verification (``insecureSkipTLSVerify``), kuota's
carries the CA bundle of its certificates: the aggregator verifies the
server as ``<service>.<namespace>.svc``.  The chart renders the same
objects (``templates/visibility.yaml``; a chart test holds the two equal).
"""

from __future__ import annotations

import base64
from typing import Any, Final

from scheduler.visibility.wire import GROUP, VERSIONS

GROUP_PRIORITY_MINIMUM: Final = 100
VERSION_PRIORITY: Final = 100


def api_service_name(version: str) -> str:
    return f"{version}.{GROUP}"


def api_services(
    *, service: str, namespace: str, port: int, ca_bundle_pem: bytes | None
) -> list[dict[str, Any]]:
    """Both APIServices; without a CA bundle the aggregator is told to skip verification."""
    trust: dict[str, Any] = (
        {"caBundle": base64.b64encode(ca_bundle_pem).decode()}
        if ca_bundle_pem
        else {"insecureSkipTLSVerify": True}
    )
    return [
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": api_service_name(version)},
            "spec": {
                "group": GROUP,
                "version": version,
                "groupPriorityMinimum": GROUP_PRIORITY_MINIMUM,
                "versionPriority": VERSION_PRIORITY,
                "service": {"name": service, "namespace": namespace, "port": port},
                **trust,
            },
        }
        for version in VERSIONS
    ]


__all__ = ["api_service_name", "api_services"]
