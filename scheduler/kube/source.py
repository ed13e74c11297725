"""List and watch any resource as raw JSON through kubernetes_asyncio's client.

The generated API methods turn objects into model classes; the scheduler
reads raw dicts (the API layer parses them), so this source calls
``ApiClient.call_api`` on the resource's path and reads the watch stream's
JSON lines itself.  Errors become the informer's vocabulary: 410 Gone is
:class:`~scheduler.kube.informer.Expired`, anything worth retrying is
:class:`~scheduler.kube.informer.TransientError`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
from kubernetes_asyncio.client import ApiClient
from kubernetes_asyncio.client.exceptions import ApiException

from scheduler.kube.informer import Expired, TransientError

WATCH_TIMEOUT_SECONDS = 300


@dataclass(frozen=True, slots=True)
class Resource:
    """Where a kind lives in the API: ``group`` "" is the core group."""

    group: str
    version: str
    plural: str

    @property
    def path(self) -> str:
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{prefix}/{self.plural}"


def _with_type(item: dict[str, Any], page: dict[str, Any]) -> dict[str, Any]:
    """List items of built-in types carry no apiVersion/kind; watch events do.  Make them alike.

    Pure: ``JobList`` in ``batch/v1`` makes an item ``batch/v1`` ``Job``.
    """
    if item.get("kind") and item.get("apiVersion"):
        return item
    kind = str(page.get("kind", ""))
    return {
        "apiVersion": page.get("apiVersion"),
        "kind": kind[:-4] if kind.endswith("List") else kind,
        **item,
    }


class KubeSource:
    """A :class:`~scheduler.kube.informer.Source` for one resource, cluster-wide."""

    def __init__(
        self,
        api: ApiClient,
        resource: Resource,
        *,
        page_size: int = 500,
        watch_timeout_seconds: int = WATCH_TIMEOUT_SECONDS,
    ) -> None:
        self.api = api
        self.resource = resource
        self.page_size = page_size
        self.watch_timeout_seconds = watch_timeout_seconds

    async def _get(
        self, query: list[tuple[str, Any]], *, timeout: float | None
    ) -> aiohttp.ClientResponse:
        try:
            response = await self.api.call_api(
                self.resource.path,
                "GET",
                query_params=query,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=timeout,
            )
        except ApiException as failure:
            if failure.status == 410:
                raise Expired(str(failure.reason)) from failure
            raise TransientError(f"HTTP {failure.status}: {failure.reason}") from failure
        except (TimeoutError, aiohttp.ClientError, OSError) as failure:
            raise TransientError(repr(failure)) from failure
        if response.status >= 400:
            # Raw responses are not checked by the client: a missing CRD (404),
            # an expired continue token (410) or RBAC (403) arrive here.
            try:
                body = (await response.read()).decode(errors="replace")[:300].strip()
            except (TimeoutError, aiohttp.ClientError):
                body = ""
            finally:
                response.release()
            if response.status == 410:
                raise Expired(body)
            raise TransientError(f"GET {self.resource.path}: HTTP {response.status}: {body}")
        return response

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        """Every object, page by page; the resourceVersion of the first page is the snapshot's."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        version = ""
        while True:
            query: list[tuple[str, Any]] = [("limit", self.page_size)]
            if token:
                query.append(("continue", token))
            response = await self._get(query, timeout=60)
            try:
                page = json.loads(await response.read())
            except (TimeoutError, aiohttp.ClientError, ValueError) as failure:
                raise TransientError(f"reading the list: {failure!r}") from failure
            finally:
                response.release()
            items.extend(_with_type(item, page) for item in page.get("items") or [])
            metadata = page.get("metadata") or {}
            version = version or str(metadata.get("resourceVersion", ""))
            token = metadata.get("continue")
            if not token:
                return items, version

    async def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        query: list[tuple[str, Any]] = [
            ("watch", "true"),
            ("allowWatchBookmarks", "true"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", self.watch_timeout_seconds),
        ]
        response = await self._get(query, timeout=self.watch_timeout_seconds + 30)
        try:
            while True:
                try:
                    line = await response.content.readline()
                except (TimeoutError, aiohttp.ClientError, OSError) as failure:
                    raise TransientError(f"watch stream broke: {failure!r}") from failure
                if not line:
                    return
                try:
                    event = json.loads(line)
                except ValueError as failure:
                    raise TransientError(f"malformed watch event: {line[:200]!r}") from failure
                if isinstance(event, dict):
                    yield event
        finally:
            response.release()
