"""The one adapter between the webhook's decisions and a real API server.

Implements :class:`~webhook.lookup.ClusterLookup` with kuota's one client
factory and REST layer (:mod:`scheduler.kube.client`, :mod:`scheduler.kube.rest`):
plain GETs of the namespace, of LocalQueue ``<namespace>/default`` and of a
Job's owner, each bounded by ``--lookup-timeout``.  404 is an answer
(absent); anything else that goes wrong is :class:`LookupFailed`, and the
decision code says what that means for the request.  This is the only module
of the ``webhook`` package allowed to import those two (see the
import-linter contracts in ``pyproject.toml``); nothing of the webhook
imports the Kubernetes client itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import HUB_VERSION, KUEUE_GROUP, KUEUE_PLURALS
from scheduler.jobs import for_object
from scheduler.kube.client import connect
from scheduler.kube.rest import NotFound, Resource, Rest, RestError
from webhook.lookup import LookupFailed
from webhook.settings import WebhookSettings

LOCAL_QUEUES = Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["LocalQueue"])
NAMESPACES = Resource("", "v1", "namespaces")
DEFAULT_LOCAL_QUEUE = "default"


def owner_resource(api_version: str, kind: str) -> Resource:
    """Where an owner of ``apiVersion``/``kind`` lives: pure.

    The plural is the integration's (:func:`scheduler.jobs.for_object`), or
    kuota's own kind's, else the lowercase kind + "s".
    """
    group, _, version = api_version.rpartition("/")
    integration = for_object({"apiVersion": api_version, "kind": kind})
    if integration is not None:
        plural = integration.resource
    elif group == KUEUE_GROUP and kind in KUEUE_PLURALS:
        plural = KUEUE_PLURALS[kind]
    else:
        plural = kind.lower() + "s"
    return Resource(group, version, plural)


class KubernetesLookup:
    def __init__(self, rest: Rest, timeout: float) -> None:
        self._rest = rest
        self._timeout = timeout

    @classmethod
    @asynccontextmanager
    async def connect(cls, settings: WebhookSettings) -> AsyncIterator[KubernetesLookup]:
        async with connect(settings.kubeconfig) as api:
            yield cls(Rest(api), settings.lookup_timeout_seconds)

    async def _get(self, path: str) -> dict[str, Any] | None:
        try:
            return await asyncio.wait_for(self._rest.get(path), timeout=self._timeout)
        except NotFound:
            return None
        except RestError as failed:
            raise LookupFailed(str(failed)) from failed
        except TimeoutError as failed:
            raise LookupFailed(f"GET {path}: no answer within {self._timeout}s") from failed

    async def has_default_local_queue(self, namespace: str) -> bool:
        path = LOCAL_QUEUES.object_path(DEFAULT_LOCAL_QUEUE, namespace=namespace)
        return await self._get(path) is not None

    async def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        found = await self._get(NAMESPACES.object_path(namespace))
        return None if found is None else objects.labels(found)

    async def get_object(
        self, api_version: str, kind: str, namespace: str, name: str
    ) -> Mapping[str, Any] | None:
        path = owner_resource(api_version, kind).object_path(name, namespace=namespace)
        return await self._get(path)
