"""List and watch any resource as raw JSON, through the REST layer.

The informer (:mod:`scheduler.kube.informer`) is I/O-free; this is its
:class:`~scheduler.kube.informer.Source` for a real API server.  Lists are
paged (``limit``/``continue``); a watch starts from the list's
resourceVersion with bookmarks on.  The REST layer's errors become the
informer's vocabulary: :class:`~scheduler.kube.rest.Expired` (410) is
:class:`~scheduler.kube.informer.Expired`, anything else (a broken
connection, a missing CRD, RBAC) is worth retrying after a back-off:
:class:`~scheduler.kube.informer.TransientError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from kubernetes_asyncio.client import ApiClient

from scheduler.kube import rest
from scheduler.kube.informer import Expired, TransientError
from scheduler.kube.rest import Resource, Rest, RestClient

__all__ = ["KubeSource", "Resource"]

WATCH_TIMEOUT_SECONDS = 300


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
        api: RestClient | ApiClient,
        resource: Resource,
        *,
        page_size: int = 500,
        watch_timeout_seconds: int = WATCH_TIMEOUT_SECONDS,
    ) -> None:
        self.rest: RestClient = Rest(api) if isinstance(api, ApiClient) else api
        self.resource = resource
        self.page_size = page_size
        self.watch_timeout_seconds = watch_timeout_seconds

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        """Every object, page by page; the resourceVersion of the first page is the snapshot's."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        version = ""
        while True:
            query: list[tuple[str, Any]] = [("limit", self.page_size)]
            if token:
                query.append(("continue", token))
            try:
                page = await self.rest.list(self.resource.path, query=query, timeout=60)
            except rest.Expired as failure:
                raise Expired(str(failure)) from failure
            except rest.RestError as failure:
                raise TransientError(str(failure)) from failure
            items.extend(
                _with_type(item, page) for item in page.get("items") or [] if isinstance(item, dict)
            )
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
        try:
            async for event in self.rest.stream(
                self.resource.path, query=query, timeout=self.watch_timeout_seconds + 30
            ):
                yield event
        except rest.Expired as failure:
            raise Expired(str(failure)) from failure
        except rest.RestError as failure:
            raise TransientError(str(failure)) from failure
