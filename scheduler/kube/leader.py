"""Leader election: only the holder of a ``coordination.k8s.io`` Lease acts, while it holds it.

Every replica runs the informers (a standby is warm); only the leader runs
the scheduling loop and writes.  The service sees one small interface,
:class:`Leadership`:

- ``run(on_started, on_stopped)`` campaigns until cancelled.  Each *term*
  runs ``on_started`` (the scheduling loop) while this replica leads; when
  the term ends, the loop is cancelled, ``on_stopped`` runs once (the
  service rebuilds its in-memory state there) and the replica campaigns
  again.  A term ends when the Lease cannot be renewed within the renew
  deadline, when a write is fenced (:mod:`scheduler.kube.fence`), or when
  ``on_started`` returns or fails (a leader that holds the Lease and does
  nothing would block every standby; a failed loop is retried after a
  back-off).  A replica never exits because it lost the Lease.
- ``is_leader()`` says whether a term is running;
- ``fence`` is what the writer asks before every write.

:class:`LeaseElection` keeps kubernetes_asyncio's ``LeaderElection`` loop
(campaign, renew every ``retry_period``, give up after ``renew_deadline``)
and gives it :class:`RestLeaseLock`, a Lease lock over kuota's own REST
layer instead of the library's ``LeaseLock``:

- a connection error, a timeout or an error status is "this attempt
  failed" (``get`` answers ``(False, error)``, ``create``/``update``
  answer False), never an exception, so an API server restart cannot end
  the process; every request has a timeout (``renew_deadline``);
- ``update`` is a PUT carrying the Lease's ``resourceVersion`` as read, so
  two replicas cannot both win one renewal;
- the instant each successful acquire/renew request was *sent* goes to the
  :class:`~scheduler.kube.fence.LeaseFence`, which allows writes only until
  ``sent + renew_deadline`` (see that module for why this is safe);
- at a graceful end of a term (the process stops, the loop returned or
  failed) the Lease is released the way client-go releases it
  (``holderIdentity`` empty, ``leaseDurationSeconds: 1``), so a standby
  takes over at its next attempt instead of after the lease duration.  A
  lost or fenced term does not release: the Lease may be another's.

:class:`AlwaysLeader` is for a single replica (``--no-leader-elect``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal, Protocol

from kubernetes_asyncio.client.exceptions import ApiException
from kubernetes_asyncio.leaderelection import electionconfig, leaderelection
from kubernetes_asyncio.leaderelection.leaderelectionrecord import LeaderElectionRecord
from kubernetes_asyncio.leaderelection.resourcelock.baselock import BaseLock

from scheduler.kube.fence import Fence, Fenced, LeaseFence, Unfenced, boottime
from scheduler.kube.informer import Backoff
from scheduler.kube.rest import Conflict, NotFound, Resource, RestClient, RestError

log = logging.getLogger("kuota.leader")
Callback = Callable[[], Awaitable[None]]
LEASES = Resource("coordination.k8s.io", "v1", "leases")
Ending = Literal["lost", "fenced", "failed", "finished"]


class Leadership(Protocol):
    identity: str

    @property
    def fence(self) -> Fence:
        """What the writer asks before every write (:mod:`scheduler.kube.fence`)."""
        ...

    def is_leader(self) -> bool:
        """Whether this replica leads right now."""
        ...

    async def run(self, on_started: Callback, on_stopped: Callback) -> None:
        """Campaign (and lead) until cancelled; see the module docstring."""
        ...


def micro_time(moment: datetime) -> str:
    """A Lease's ``MicroTime`` (RFC 3339, microseconds, UTC): pure."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def utc_now() -> datetime:
    return datetime.now(UTC)


def election_record(lease: Mapping[str, Any]) -> LeaderElectionRecord:
    """The library's view of a Lease (an empty holder is None: free to take): pure."""
    spec = lease.get("spec") or {}
    duration = spec.get("leaseDurationSeconds")
    return LeaderElectionRecord(
        spec.get("holderIdentity") or None,
        str(duration) if duration else None,
        spec.get("acquireTime") or None,
        spec.get("renewTime") or None,
    )


def lease_spec(
    previous: Mapping[str, Any], *, holder: str, duration: int, now: datetime
) -> dict[str, Any]:
    """The spec by which ``holder`` holds the Lease from ``now`` (renewing keeps acquireTime): pure.

    ``leaseTransitions`` counts changes from one holder to another, as client-go does.
    """
    before = previous.get("holderIdentity") or ""
    renewing = before == holder and bool(previous.get("acquireTime"))
    transitions = int(previous.get("leaseTransitions") or 0)
    if before and before != holder:
        transitions += 1
    return {
        **previous,
        "holderIdentity": holder,
        "leaseDurationSeconds": duration,
        "acquireTime": previous["acquireTime"] if renewing else micro_time(now),
        "renewTime": micro_time(now),
        "leaseTransitions": transitions,
    }


def failed_get(failure: RestError) -> ApiException:
    """The library's "could not read the lock": it creates the Lease on code 404 only: pure."""
    status = failure.status or 0
    answer = ApiException(status=status, reason=str(failure))
    answer.body = json.dumps({"code": status, "message": str(failure)}).encode()
    return answer


class RestLeaseLock(BaseLock):
    """kubernetes_asyncio's resource-lock interface over a Lease, through :class:`RestClient`."""

    def __init__(
        self,
        rest: RestClient,
        *,
        name: str,
        namespace: str,
        identity: str,
        fence: LeaseFence,
        timeout: float,
        clock: Callable[[], float] = boottime,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(name, namespace, identity)
        self.rest = rest
        self.fence = fence
        self.timeout = timeout
        self.clock = clock
        self.now = now
        self.lease: dict[str, Any] | None = None
        """The Lease as last read or written (its resourceVersion guards the next update)."""
        self.owner: Mapping[str, Any] | None = None
        """The owner reference a Lease this lock creates gets (:mod:`scheduler.kube.ownership`).

        Set at creation, not only adopted later: a standby that re-creates the
        Lease while ``helm uninstall`` is deleting everything must not leave an
        orphan behind (the garbage collector removes a Lease whose owner is gone).
        """

    def _path(self, name: str, namespace: str) -> str:
        return LEASES.object_path(name, namespace=namespace)

    async def get(
        self, name: str, namespace: str
    ) -> tuple[bool, LeaderElectionRecord] | tuple[bool, Exception] | tuple[bool, None]:
        try:
            self.lease = await self.rest.get(self._path(name, namespace), timeout=self.timeout)
        except RestError as failure:
            if not isinstance(failure, NotFound):
                log.warning(
                    "could not read the Lease", extra={"lease": name, "error": str(failure)}
                )
            return False, failed_get(failure)
        return True, election_record(self.lease)

    async def create(
        self, name: str, namespace: str, election_record: LeaderElectionRecord
    ) -> bool:
        holder = election_record.holder_identity or ""
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": name,
                "namespace": namespace,
                **({"ownerReferences": [dict(self.owner)]} if self.owner else {}),
            },
            "spec": lease_spec(
                {}, holder=holder, duration=self._duration(election_record), now=self.now()
            ),
        }
        try:
            return await self._write(
                holder,
                lambda: self.rest.create(
                    LEASES.collection_path(namespace), body, timeout=self.timeout
                ),
            )
        except Conflict:  # another replica created it first
            return False

    async def update(self, name: str, namespace: str, updated_record: LeaderElectionRecord) -> bool:
        """Replace the Lease as read; a conflict from a change outside ``spec`` is retried once.

        Only ``spec`` says who holds the Lease.  When the PUT conflicts and a
        fresh read shows the same ``spec`` (the leader added an owner
        reference, :mod:`scheduler.kube.ownership`), no other replica has
        written it: the same update is sent again on the fresh version
        instead of failing this attempt.
        """
        read = self.lease
        if read is None:
            return False
        path = self._path(name, namespace)
        for attempt in range(2):
            holder = updated_record.holder_identity or ""
            body = {
                **read,
                "spec": lease_spec(
                    read.get("spec") or {},
                    holder=holder,
                    duration=self._duration(updated_record),
                    now=self.now(),
                ),
            }
            try:
                return await self._write(
                    holder, partial(self.rest.replace, path, body, timeout=self.timeout)
                )
            except Conflict:
                if attempt:
                    return False
                try:
                    fresh = await self.rest.get(path, timeout=self.timeout)
                except RestError:
                    return False
                if fresh.get("spec") != read.get("spec"):
                    return False  # another replica wrote it: this attempt lost
                read = fresh
        return False

    async def release(self) -> bool:
        """Give the Lease up if this replica holds it (as last seen); True when released."""
        lease = self.lease
        if lease is None or (lease.get("spec") or {}).get("holderIdentity") != self.identity:
            return False
        now = micro_time(self.now())
        spec = {
            **(lease.get("spec") or {}),
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
        }
        path = self._path(self.name, self.namespace)
        try:
            self.lease = await self.rest.replace(
                path, {**lease, "spec": spec}, timeout=self.timeout
            )
        except RestError as failure:
            log.info("could not release the Lease", extra={"error": str(failure)})
            return False
        log.info("Lease released", extra={"lease": self.name, "identity": self.identity})
        return True

    def _duration(self, record: LeaderElectionRecord) -> int:
        return max(1, int(float(record.lease_duration or self.fence.lease_duration)))

    async def _write(self, holder: str, send: Callable[[], Awaitable[dict[str, Any]]]) -> bool:
        """Send one create/replace; True when stored.  A conflict is raised (update decides)."""
        sent = self.clock()  # before the request leaves: the fence counts from here
        try:
            self.lease = await send()
        except Conflict:
            raise
        except RestError as failure:
            log.info("Lease write failed", extra={"lease": self.name, "error": str(failure)})
            return False
        if holder == self.identity:
            self.fence.renewed(sent)
        return True


class _Term:
    """One term of leadership: how it ended, and the task running the leader's work."""

    def __init__(self, work: Callback, fence: LeaseFence) -> None:
        self.work = work
        self.fence = fence
        self.task: asyncio.Task[Any] | None = None
        self.leading = False
        self.closed = False
        self.ending: Ending | None = None
        self.ended = asyncio.Event()

    def end(self, ending: Ending) -> None:
        if self.ending is None:
            self.ending = ending
        self.leading = False
        self.fence.close()
        self.ended.set()

    async def start(self) -> None:
        """The library's ``onstarted_leading`` (it runs this as a task)."""
        if self.closed:  # the term ended before the library's task got to run
            return
        self.task = asyncio.current_task()
        self.leading = True
        self.fence.start_term()
        try:
            await self.work()
        except asyncio.CancelledError:
            raise
        except Fenced as fenced:
            log.info("a write was fenced; stepping down", extra={"why": str(fenced)})
            self.end("fenced")
        except Exception:
            log.exception("the leader's work failed; stepping down")
            self.end("failed")
        else:
            self.end("finished")

    async def lost(self) -> None:
        """The library's ``onstopped_leading``: the Lease could not be renewed in time."""
        log.warning("the Lease could not be renewed in time; stepping down")
        self.end("lost")

    async def close(self) -> None:
        """Stop the work (if it still runs), then refuse writes.

        In that order: a loop stopped gracefully may still write its queued
        Events on the way out, within the fence's bounds.
        """
        self.closed = True
        self.leading = False
        task = self.task
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self.fence.close()


class LeaseElection:
    """:class:`Leadership` through a Lease (see the module docstring)."""

    def __init__(
        self,
        rest: RestClient,
        *,
        name: str,
        namespace: str,
        identity: str,
        lease_duration: float = 15,
        renew_deadline: float = 10,
        retry_period: float = 2,
        clock: Callable[[], float] = boottime,
    ) -> None:
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.fence = LeaseFence(
            lease_duration=lease_duration, renew_deadline=renew_deadline, clock=clock
        )
        self.lock = RestLeaseLock(
            rest,
            name=name,
            namespace=namespace,
            identity=identity,
            fence=self.fence,
            timeout=renew_deadline,
            clock=clock,
        )
        self.terms = 0
        """Terms started so far."""
        self._term: _Term | None = None

    def is_leader(self) -> bool:
        return self._term is not None and self._term.leading

    def may_write(self) -> bool:
        return self.fence.may_write()

    async def run(self, on_started: Callback, on_stopped: Callback) -> None:
        backoff = Backoff(initial=float(self.retry_period), maximum=60.0)
        while True:
            ending = await self._one_term(on_started)
            log.info(
                "no longer leading; campaigning again",
                extra={"identity": self.identity, "ending": ending},
            )
            await on_stopped()
            if ending == "failed":
                await asyncio.sleep(backoff.delay())
            else:
                backoff.reset()

    async def _one_term(self, work: Callback) -> Ending:
        """Campaign, lead until the term ends, clean up; how it ended."""
        term = _Term(work, self.fence)
        self._term = term

        async def started() -> None:
            if term.closed:
                return
            self.terms += 1
            log.info("leading", extra={"identity": self.identity, "term": self.terms})
            await term.start()

        config = electionconfig.Config(
            self.lock,
            self.lease_duration,
            self.renew_deadline,
            self.retry_period,
            started,
            term.lost,
        )
        election = asyncio.create_task(
            leaderelection.LeaderElection(config).run(), name="lease-election"
        )
        ended = asyncio.create_task(term.ended.wait(), name="term-ended")
        graceful = True
        try:
            await asyncio.wait([election, ended], return_when=asyncio.FIRST_COMPLETED)
            graceful = False
        finally:
            ending = term.ending
            await term.close()
            for task in (election, ended):
                task.cancel()
            results = await asyncio.gather(election, ended, return_exceptions=True)
            if graceful or ending in ("failed", "finished"):
                await self.lock.release()
        if isinstance(results[0], Exception):  # a bug (the lock never raises): let it end us
            raise results[0]
        return ending or "lost"


class AlwaysLeader:
    """:class:`Leadership` of a replica that is alone: it leads from the start, once."""

    def __init__(self, identity: str = "") -> None:
        self.identity = identity
        self.fence: Fence = Unfenced()
        self.leading = False

    def is_leader(self) -> bool:
        return self.leading

    async def run(self, on_started: Callback, on_stopped: Callback) -> None:
        self.leading = True
        try:
            await on_started()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the leader's work failed")
            self.leading = False
            await on_stopped()
        finally:
            self.leading = False
