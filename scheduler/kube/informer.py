"""Informers: a local mirror of one kind of object, kept current by list + watch.

The scheduler must never act on a partial picture, so each informer

1. **lists** the kind and remembers the list's ``resourceVersion``; the
   difference between what it held and what the list returned is delivered as
   ADDED / MODIFIED / DELETED events (objects that vanished while the watch
   was down are deleted here, nowhere else);
2. **watches** from exactly that ``resourceVersion`` (with bookmarks, so the
   version advances even when nothing changes), applying each event to the
   mirror before handing it on;
3. when the server ends a watch (its timeout), **resumes** from the last
   version seen; when the connection breaks, resumes after a back-off; when
   the server answers **410 Gone** (the version fell out of its history),
   lists again and delivers the difference.

``synced`` is set after the first complete list, so the caller can wait for
every informer before its first decision.  The I/O lives behind
:class:`Source`, which keeps this module testable with a scripted fake and
virtual time.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from scheduler.api.objects import key as object_key
from scheduler.api.objects import resource_version

EventType = Literal["ADDED", "MODIFIED", "DELETED"]
log = logging.getLogger("kuota.informer")


class Expired(Exception):
    """The server no longer has the requested resourceVersion (HTTP 410 Gone)."""


class AskAgain(Expired):
    """Not an expiry: the source has nothing to watch yet and asks to be listed again later.

    Raised on a schedule (every few seconds), so the informer does not log it.
    """


class TransientError(Exception):
    """A broken connection or a server error worth retrying after a back-off."""


@dataclass(frozen=True, slots=True)
class Event:
    type: EventType
    object: Mapping[str, Any]
    key: str


class Source(Protocol):
    """List and watch one kind; raw JSON objects in, ``Expired``/``TransientError`` out."""

    async def list(self) -> tuple[list[dict[str, Any]], str]:
        """Every object and the list's resourceVersion."""
        ...

    def watch(self, resource_version: str) -> AsyncIterator[dict[str, Any]]:
        """Raw watch events (``{"type", "object"}``, bookmarks too) until the stream ends."""
        ...


def diff(
    held: Mapping[str, Mapping[str, Any]], listed: Mapping[str, Mapping[str, Any]]
) -> list[Event]:
    """Pure: the events that turn ``held`` into ``listed`` (deletions last, keys sorted)."""
    events = []
    for key in sorted(listed):
        obj = listed[key]
        if key not in held:
            events.append(Event("ADDED", obj, key))
        elif resource_version(held[key]) != resource_version(obj):
            events.append(Event("MODIFIED", obj, key))
    events += [Event("DELETED", held[key], key) for key in sorted(held) if key not in listed]
    return events


@dataclass
class Backoff:
    """Exponential back-off with jitter: 0.5 s doubling to 30 s, reset after success."""

    initial: float = 0.5
    maximum: float = 30.0
    jitter: float = 0.1
    _next: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self._next = self.initial

    def delay(self) -> float:
        current = self._next
        self._next = min(self._next * 2, self.maximum)
        return current * (1 + random.uniform(0, self.jitter))

    def reset(self) -> None:
        self._next = self.initial


class Informer:
    """Mirror of one kind; calls ``handler(event)`` for every change, in order."""

    def __init__(
        self,
        name: str,
        source: Source,
        handler: Callable[[Event], None],
        *,
        backoff: Backoff | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self.name = name
        self.source = source
        self.handler = handler
        self.backoff = backoff or Backoff()
        self.sleep = sleep
        self.store: dict[str, Mapping[str, Any]] = {}
        self.synced = asyncio.Event()
        self.lists = 0
        self.resumes = 0
        self.version: str | None = None
        """The last resourceVersion applied (None: list first); kept across broken streams."""

    async def run(self) -> None:
        """List, then watch forever; returns only when cancelled."""
        while True:
            try:
                if self.version is None:
                    await self._relist()
                await self._watch()
            except AskAgain:
                self.version = None
            except Expired:
                log.info("watch expired, listing again", extra={"informer": self.name})
                self.version = None
            except TransientError as failure:
                delay = self.backoff.delay()
                log.warning(
                    "watch broken, resuming",
                    extra={
                        "informer": self.name,
                        "error": str(failure),
                        "retry_in_s": round(delay, 2),
                    },
                )
                await self.sleep(delay)

    async def _relist(self) -> None:
        items, version = await self.source.list()
        listed = {object_key(item): item for item in items}
        changes = diff(self.store, listed)
        self.store = dict(listed)
        self.lists += 1
        for change in changes:
            self.handler(change)
        self.version = version
        self.synced.set()
        self.backoff.reset()

    async def _watch(self) -> None:
        """Apply watch events from ``self.version`` until the server ends the stream."""
        assert self.version is not None
        async for raw in self.source.watch(self.version):
            kind, obj = raw.get("type"), raw.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise Expired(str(obj.get("message", "")))
                raise TransientError(f"watch error {obj.get('code')}: {obj.get('message')}")
            self.version = resource_version(obj) or self.version
            self.backoff.reset()
            if kind == "BOOKMARK":
                continue
            if kind not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            key = object_key(obj)
            if kind == "DELETED":
                self.store.pop(key, None)
            else:
                self.store[key] = obj
            self.handler(Event(kind, obj, key))
        self.resumes += 1
