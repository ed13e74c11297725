"""Kubernetes Events that say what kuota did, complete and counted, off the hot path.

**Which API.**  kuota writes ``core/v1`` Events, the way client-go's
``tools/record`` recorder does (the one most controllers use): ``source``,
``reportingComponent`` and ``reportingInstance`` name the scheduler replica,
``firstTimestamp``/``lastTimestamp`` and ``count`` say when and how often.
Chosen over ``events.k8s.io/v1`` because

- a repeat is visible at once: it is one merge patch of ``count`` and
  ``lastTimestamp``; the ``events.k8s.io`` recorder of client-go batches a
  ``series`` and writes it every 30 minutes, so ``kubectl`` would show a stale
  count for half an hour;
- every ``kubectl`` (``get events``' LAST SEEN and COUNT, ``describe``'s
  "x3 over 5m") reads these fields directly, whatever its version;
- the ``events.k8s.io`` API requires an ``action`` and a ``note`` of at most
  1 kB and groups repeats regardless of their message; kuota's messages carry
  the facts (which ClusterQueue, which preemptor), so a repeat is the same
  reason *and* message, as in ``tools/record``.

Both APIs store the same objects; ``eventTime`` is left unset because a
``core/v1`` Event that sets it is validated by the new API's rules.

**Aggregation.**  A repeat of the same event (same object, type, reason and
message) within :data:`REPEAT_WINDOW` of its last occurrence updates the
Event already written (``count + 1``, new ``lastTimestamp``) instead of
creating another one.  The Events written are remembered in an LRU cache of
:data:`CACHE_SIZE` entries (client-go's size): a key pushed out, or older
than the window, starts a new Event; a patch that finds the Event gone (the
API server's TTL, 1 h by default) creates a new one.

**Never in the way.**  :meth:`EventRecorder.record` is synchronous and
returns at once: it appends to a bounded queue (:data:`QUEUE_SIZE` distinct
events; beyond that an event is dropped and counted in
``kuota_events_dropped_total{reason="queue_full"}``).  Repeats still in the
queue are merged into one write.  At most ``in_flight`` senders run; each
exits when the queue is empty, so an idle recorder holds no task.  A failed
write is dropped and counted (``reason="api_error"``), never retried: an
Event explains, it decides nothing; so is one the fence refuses
(``reason="fenced"``, :mod:`scheduler.kube.fence`: this replica may no
longer lead), quietly.  :meth:`EventRecorder.flush` waits for
what is queued (tests, and a graceful stop).  Every write goes through the
``timed`` wrapper the writer passes in, so it is counted and timed with the
scheduler's other writes (and fenced with them).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol, TypeVar

from scheduler.api import objects
from scheduler.api.refs import V1BETA2
from scheduler.jobs import integrations
from scheduler.kube.fence import Fenced
from scheduler.kube.metrics import EVENTS_DROPPED
from scheduler.kube.rest import NotFound, Resource, RestClient, RestError
from scheduler.status.conditions import timestamp

log = logging.getLogger("kuota.events")
T = TypeVar("T")
EventType = Literal["Normal", "Warning"]

EVENTS = Resource("", "v1", "events")
COMPONENT = "kuota-scheduler"
MAX_MESSAGE = 1024
"""Characters of a message kept (the ``events.k8s.io`` note limit, so both APIs read it whole)."""
REPEAT_WINDOW = timedelta(minutes=10)
"""A repeat later than this after the last occurrence starts a new Event (client-go's
aggregation interval; well inside the API server's default 1 h Event TTL)."""
CACHE_SIZE = 4096
"""Events remembered for aggregation (client-go's ``maxLruCacheEntries``)."""
QUEUE_SIZE = 1024
"""Distinct events waiting to be written; more are dropped and counted."""
IN_FLIGHT = 8
"""Event writes at once, at most."""
API_VERSIONS = {
    **{integration.kind: integration.api_version for integration in integrations()},
    "Workload": V1BETA2,
}
"""``apiVersion`` of an involved object read from a list (list items carry none)."""


Send = Callable[[float | None], Awaitable[T]]
"""A write not sent yet: called with its timeout in seconds (None: the client's default)."""


class Timed(Protocol):
    """How the writer wraps each write (metrics, fencing): ``timed(verb, resource, send)``."""

    def __call__(self, verb: str, resource: str, send: Send[T], /) -> Awaitable[T]: ...


async def untimed(verb: str, resource: str, send: Send[T], /) -> T:
    """The identity wrapper (a recorder used on its own): sends at once, no timeout."""
    return await send(None)


@dataclass(frozen=True, slots=True)
class EventKey:
    """What makes two events "the same event" (client-go's ``getEventKey``)."""

    namespace: str
    kind: str
    name: str
    uid: str
    event_type: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One event as recorded: the object it is about, and how often and when it happened."""

    key: EventKey
    involved: Mapping[str, Any]
    first: datetime
    last: datetime
    count: int = 1


@dataclass(frozen=True, slots=True)
class Written:
    """An Event on the server: where it is, its count, when it was last seen."""

    name: str
    namespace: str
    count: int
    last: datetime


def event_key(
    involved: Mapping[str, Any], *, kind: str, reason: str, message: str, event_type: str
) -> EventKey:
    """The aggregation key of an event about ``involved``: pure."""
    return EventKey(
        namespace=objects.namespace(involved) or "default",
        kind=kind,
        name=objects.name(involved),
        uid=objects.uid(involved) or "",
        event_type=event_type,
        reason=reason,
        message=message[:MAX_MESSAGE],
    )


def involved_reference(involved: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """``involvedObject``: the object reference of ``involved``: pure.

    A cluster-scoped object's reference has no namespace (its Event lives in
    ``default``, as the API requires), so ``kubectl describe`` finds it.
    """
    meta = objects.metadata(involved)
    reference = {
        "apiVersion": involved.get("apiVersion") or API_VERSIONS.get(kind, ""),
        "kind": kind,
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    namespace = objects.namespace(involved)
    return {**reference, "namespace": namespace} if namespace else reference


def new_event(occurrence: Occurrence, *, instance: str) -> dict[str, Any]:
    """The complete ``core/v1`` Event for a first ``occurrence`` (or a run of them): pure."""
    key = occurrence.key
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{key.name}.", "namespace": key.namespace},
        "involvedObject": involved_reference(occurrence.involved, key.kind),
        "reason": key.reason,
        "message": key.message,
        "type": key.event_type,
        "firstTimestamp": timestamp(occurrence.first),
        "lastTimestamp": timestamp(occurrence.last),
        "count": occurrence.count,
        "source": {"component": COMPONENT, "host": instance},
        "reportingComponent": COMPONENT,
        "reportingInstance": instance,
    }


def repeat_patch(written: Written, occurrence: Occurrence) -> dict[str, Any]:
    """The merge patch that adds ``occurrence`` to the Event ``written``: pure."""
    return {"count": written.count + occurrence.count, "lastTimestamp": timestamp(occurrence.last)}


class WrittenCache:
    """The Events written, by key, least recently used first (pure in-memory state).

    :meth:`find` answers only within ``window`` of the Event's last occurrence,
    so a late repeat starts a new Event.
    """

    def __init__(self, *, size: int = CACHE_SIZE, window: timedelta = REPEAT_WINDOW) -> None:
        self.size = size
        self.window = window
        self._entries: OrderedDict[EventKey, Written] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, key: EventKey, now: datetime) -> Written | None:
        written = self._entries.get(key)
        if written is None:
            return None
        if now - written.last > self.window:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return written

    def remember(self, key: EventKey, written: Written) -> None:
        self._entries[key] = written
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def forget(self, key: EventKey) -> None:
        self._entries.pop(key, None)


def utc_now() -> datetime:
    return datetime.now(UTC)


class EventRecorder:
    """Records Events in the background (see the module docstring)."""

    def __init__(
        self,
        rest: RestClient,
        *,
        timed: Timed = untimed,
        instance: str | None = None,
        clock: Callable[[], datetime] = utc_now,
        queue_size: int = QUEUE_SIZE,
        in_flight: int = IN_FLIGHT,
        cache: WrittenCache | None = None,
    ) -> None:
        self.rest = rest
        self.timed = timed
        self.instance = instance or socket.gethostname()
        self.clock = clock
        self.queue_size = queue_size
        self.in_flight = in_flight
        self.cache = cache or WrittenCache()
        self.dropped = 0
        """Events dropped (queue full or write failed)."""
        self._waiting: dict[EventKey, Occurrence] = {}
        self._order: deque[EventKey] = deque()
        self._sending: set[EventKey] = set()
        self._senders: set[asyncio.Task[None]] = set()
        self._active = 0
        """Senders still taking keys (decremented by the sender itself, in the same step as it
        finds the queue empty, so a key queued after that always gets a sender)."""

    def record(
        self,
        involved: Mapping[str, Any],
        *,
        kind: str,
        reason: str,
        message: str,
        event_type: EventType | str = "Normal",
    ) -> None:
        """Queue an event about ``involved``; returns at once (needs a running event loop)."""
        now = self.clock()
        key = event_key(involved, kind=kind, reason=reason, message=message, event_type=event_type)
        waiting = self._waiting.get(key)
        if waiting is not None:  # not sent yet: one write will carry both
            self._waiting[key] = replace(waiting, last=now, count=waiting.count + 1)
            return
        if len(self._waiting) >= self.queue_size:
            self._drop("queue_full", key)
            return
        self._waiting[key] = Occurrence(key=key, involved=dict(involved), first=now, last=now)
        if key in self._sending:
            return  # queued again by its sender once the write in flight is done
        self._order.append(key)
        if self._active < self.in_flight:
            self._active += 1
            sender = asyncio.create_task(self._send_queued(), name="kuota-events")
            self._senders.add(sender)
            sender.add_done_callback(self._senders.discard)

    async def flush(self) -> None:
        """Wait until every queued event has been written (or dropped)."""
        while self._senders:
            await asyncio.gather(*self._senders, return_exceptions=True)

    @property
    def busy(self) -> bool:
        """Whether a sender task exists (an idle recorder holds none)."""
        return bool(self._senders)

    @property
    def queued(self) -> int:
        """Distinct events waiting to be written."""
        return len(self._waiting)

    def _drop(self, reason: str, key: EventKey) -> None:
        self.dropped += 1
        EVENTS_DROPPED.labels(reason).inc()
        log.debug(
            "event dropped",
            extra={"why": reason, "object": f"{key.kind}/{key.namespace}/{key.name}"},
        )

    async def _send_queued(self) -> None:
        # Writes about one key never overlap: a key is queued only while no
        # write of it is in flight; a repeat that arrives during the write
        # waits in ``_waiting`` and is queued again when the write is done
        # (then it patches the Event just created instead of creating another).
        try:
            while self._order:
                key = self._order.popleft()
                occurrence = self._waiting.pop(key)
                self._sending.add(key)
                try:
                    await self._write(occurrence)
                finally:
                    self._sending.discard(key)
                    if key in self._waiting:
                        self._order.append(key)
        finally:
            self._active -= 1

    async def _write(self, occurrence: Occurrence) -> None:
        key = occurrence.key
        written = self.cache.find(key, occurrence.first)
        try:
            if written is not None:
                try:
                    await self._patch(written, occurrence)
                    return
                except NotFound:  # expired on the server: start a new Event
                    self.cache.forget(key)
            await self._create(occurrence)
        except Fenced:
            self._drop("fenced", key)  # not leading now: an Event is not worth a stale write
        except RestError as failure:
            self._drop("api_error", key)
            log.warning(
                "could not write an Event",
                extra={
                    "object": f"{key.kind}/{key.namespace}/{key.name}",
                    "reason": key.reason,
                    "error": str(failure),
                },
            )

    async def _create(self, occurrence: Occurrence) -> None:
        key = occurrence.key
        path = EVENTS.collection_path(key.namespace)
        event = new_event(occurrence, instance=self.instance)
        stored = await self.timed(
            "create", "events", lambda timeout: self.rest.create(path, event, timeout=timeout)
        )
        self.cache.remember(
            key,
            Written(
                name=objects.name(stored),
                namespace=key.namespace,
                count=occurrence.count,
                last=occurrence.last,
            ),
        )

    async def _patch(self, written: Written, occurrence: Occurrence) -> None:
        path = EVENTS.object_path(written.name, namespace=written.namespace)
        patch = repeat_patch(written, occurrence)
        await self.timed(
            "patch", "events", lambda timeout: self.rest.merge_patch(path, patch, timeout=timeout)
        )
        self.cache.remember(
            occurrence.key,
            replace(written, count=written.count + occurrence.count, last=occurrence.last),
        )
