"""The one adapter between the webhook's decisions and a real API server.

Implements :class:`~webhook.lookup.ClusterLookup` with kubernetes_asyncio:
plain GETs of the namespace, of LocalQueue ``<namespace>/default`` and of a
Job's owner, each bounded by ``--lookup-timeout``.  404 is an answer
(absent); anything else that goes wrong is :class:`LookupFailed`, and the
decision code says what that means for the request.  This is the only module
of the ``webhook`` package allowed to import the Kubernetes client (see the
import-linter contracts in ``pyproject.toml``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from webhook.lookup import LookupFailed
from webhook.settings import WebhookSettings

KUEUE = "kueue.x-k8s.io/v1beta2"


class KubernetesLookup:
    def __init__(self, api: client.ApiClient, timeout: float) -> None:
        self._api = api
        self._timeout = timeout

    @classmethod
    @asynccontextmanager
    async def connect(cls, settings: WebhookSettings) -> AsyncIterator[KubernetesLookup]:
        configuration = client.Configuration()
        if settings.kubeconfig is not None:
            await config.load_kube_config(
                config_file=str(settings.kubeconfig), client_configuration=configuration
            )
        else:
            config.load_incluster_config(client_configuration=configuration)
        async with client.ApiClient(configuration=configuration) as api:
            yield cls(api, settings.lookup_timeout_seconds)

    async def _get(self, path: str) -> dict[str, Any] | None:
        try:
            result = await asyncio.wait_for(
                self._api.call_api(
                    path,
                    "GET",
                    header_params={"Accept": "application/json"},
                    auth_settings=["BearerToken"],
                    response_types_map={200: "object"},
                    _return_http_data_only=True,
                ),
                timeout=self._timeout,
            )
        except ApiException as failed:
            if failed.status == 404:
                return None
            raise LookupFailed(f"GET {path}: HTTP {failed.status} {failed.reason}") from failed
        except (TimeoutError, OSError, ValueError) as failed:
            raise LookupFailed(f"GET {path}: {type(failed).__name__}: {failed}") from failed
        return result if isinstance(result, dict) else None

    async def has_default_local_queue(self, namespace: str) -> bool:
        return (
            await self._get(f"/apis/{KUEUE}/namespaces/{namespace}/localqueues/default") is not None
        )

    async def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        found = await self._get(f"/api/v1/namespaces/{namespace}")
        if found is None:
            return None
        labels = found.get("metadata", {}).get("labels")
        return labels if isinstance(labels, dict) else {}

    async def get_object(
        self, api_version: str, kind: str, namespace: str, name: str
    ) -> Mapping[str, Any] | None:
        plural = kind.lower() + "s"
        prefix = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        return await self._get(f"{prefix}/namespaces/{namespace}/{plural}/{name}")
