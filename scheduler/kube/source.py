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

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from kubernetes_asyncio.client import ApiClient

from scheduler.kube import rest
from scheduler.kube.informer import AskAgain, Expired, TransientError
from scheduler.kube.rest import Resource, Rest, RestClient

__all__ = ["KindMissing", "KubeSource", "OptionalKindSource", "Resource"]

log = logging.getLogger("kuota.informer")

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


class KindMissing(TransientError):
    """The resource is not served (404 on the collection): its CRD is not installed."""


class KubeSource:
    """A :class:`~scheduler.kube.informer.Source` for one resource, cluster-wide."""

    def __init__(
        self,
        api: RestClient | ApiClient,
        resource: Resource,
        *,
        page_size: int = 500,
        watch_timeout_seconds: int = WATCH_TIMEOUT_SECONDS,
        label_selector: str = "",
    ) -> None:
        self.rest: RestClient = Rest(api) if isinstance(api, ApiClient) else api
        self.resource = resource
        self.label_selector = label_selector
        """Only objects with these labels (``""``: all), e.g. the Pods kuota manages."""
        self.page_size = page_size
        self.watch_timeout_seconds = watch_timeout_seconds

    def _selector(self) -> list[tuple[str, Any]]:
        return [("labelSelector", self.label_selector)] if self.label_selector else []

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        """Every object, page by page; the resourceVersion of the first page is the snapshot's."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        version = ""
        while True:
            query: list[tuple[str, Any]] = [("limit", self.page_size), *self._selector()]
            if token:
                query.append(("continue", token))
            try:
                page = await self.rest.list(self.resource.path, query=query, timeout=60)
            except rest.Expired as failure:
                raise Expired(str(failure)) from failure
            except rest.NotFound as failure:
                raise KindMissing(str(failure)) from failure
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
            *self._selector(),
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


RECHECK_SECONDS = 60.0
"""How often a source of a kind that is not served looks again (its CRD may be installed)."""


class OptionalKindSource:
    """A :class:`KubeSource` for a kind whose CRD may be absent (JobSet without JobSet installed).

    While the API server does not serve the kind, the list is empty (so the
    informer counts as synced and nothing waits for it) and one log line says
    why; the "watch" then sleeps and asks for a new list, which finds the kind
    once its CRD is installed.
    """

    def __init__(
        self,
        source: KubeSource,
        *,
        what: str,
        recheck_seconds: float = RECHECK_SECONDS,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.source = source
        self.what = what
        self.recheck_seconds = recheck_seconds
        self.sleep = sleep
        self.missing = False

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        try:
            listed = await self.source.list()
        except KindMissing as failure:
            if not self.missing:
                log.info(
                    f"{self.what} are not served by the API server (CRD not installed): "
                    "not managing them until they are",
                    extra={
                        "resource": self.source.resource.path,
                        "error": str(failure),
                        "recheck_s": self.recheck_seconds,
                    },
                )
            self.missing = True
            return [], ""
        if self.missing:
            log.info(
                f"{self.what} are served now: managing them",
                extra={"resource": self.source.resource.path},
            )
        self.missing = False
        return listed

    async def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        if self.missing:
            await self.sleep(self.recheck_seconds)
            raise AskAgain("the kind was not served; listing again")
        async for event in self.source.watch(resource_version):
            yield event


NEEDED_RECHECK_SECONDS = 5.0
"""How often a source not needed yet asks again whether it is."""


class WhenNeededSource:
    """A :class:`KubeSource` listed and watched only once ``needed()`` says so.

    Every Pod of the cluster is watched for topology-aware scheduling only
    (docs/concepts.md#topology-aware-scheduling): until a ResourceFlavor
    names a Topology the list is empty (the informer counts as synced) and
    the "watch" sleeps and lists again.  ``on_listed`` is called with each
    real list, before its objects are applied: from then on the informer
    holds every object.  Once listed it keeps watching.
    """

    def __init__(
        self,
        source: KubeSource,
        *,
        needed: Callable[[], bool],
        on_listed: Callable[[], None],
        what: str,
        recheck_seconds: float = NEEDED_RECHECK_SECONDS,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.source = source
        self.needed = needed
        self.on_listed = on_listed
        self.what = what
        self.recheck_seconds = recheck_seconds
        self.sleep = sleep
        self.listing = False
        """Whether the informer holds every object (a real list was made)."""

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        if not self.listing and not self.needed():
            return [], ""
        listed = await self.source.list()
        if not self.listing:
            log.info(f"watching {self.what}", extra={"resource": self.source.resource.path})
        self.listing = True
        self.on_listed()
        return listed

    async def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        if not self.listing:
            await self.sleep(self.recheck_seconds)
            raise AskAgain("not needed yet; asking again")
        async for event in self.source.watch(resource_version):
            yield event
