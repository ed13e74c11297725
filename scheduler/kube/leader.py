"""Leader election: only the holder of a ``coordination.k8s.io`` Lease acts.

Every replica runs the informers (a standby is warm); only the leader runs
the scheduling loop and writes.  The service sees one small interface,
:class:`Leadership`:

- ``run(on_started, on_stopped)`` campaigns until cancelled; ``on_started``
  runs while this replica leads (the scheduling loop), ``on_stopped`` once
  when it stops leading: the Lease could not be renewed within the renew
  deadline, or ``on_started`` itself failed (a leader that holds the Lease
  and does nothing would block every standby, so a failed loop counts as
  lost leadership);
- ``is_leader()`` says whether this replica leads right now.

:class:`LeaseElection` is kubernetes_asyncio's ``leaderelection`` over a
Lease; :class:`AlwaysLeader` is for a single replica (``--no-leader-elect``).

The seam for fencing (not implemented yet): a write is safe only while the
Lease is held *at that instant*, not merely "we have not noticed losing it".
A later change makes :meth:`LeaseElection.is_leader` compare the last
successful renewal with the renew deadline and has the writer
(:meth:`scheduler.kube.writer.Writer._timed`, the one path of every write)
refuse to write when it is false.  Nothing outside this module and that one
method needs to change for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from kubernetes_asyncio.client import ApiClient
from kubernetes_asyncio.leaderelection import electionconfig, leaderelection
from kubernetes_asyncio.leaderelection.resourcelock.leaselock import LeaseLock

log = logging.getLogger("kuota.leader")
Callback = Callable[[], Awaitable[None]]


class Leadership(Protocol):
    identity: str

    def is_leader(self) -> bool:
        """Whether this replica leads right now."""
        ...

    async def run(self, on_started: Callback, on_stopped: Callback) -> None:
        """Campaign (and lead) until cancelled; see the module docstring."""
        ...


class _Term:
    """One term of leadership: ``on_stopped`` runs at most once, whatever ends it."""

    def __init__(self, on_started: Callback, on_stopped: Callback) -> None:
        self.on_started = on_started
        self.on_stopped = on_stopped
        self.leading = False
        self.stopped = False

    async def start(self) -> None:
        self.leading = True
        try:
            await self.on_started()
        except asyncio.CancelledError:
            raise
        except Exception:
            # Nobody awaits this coroutine (the election runs it as a task):
            # an exception would otherwise leave a leader that does nothing.
            log.exception("the leader's work failed; giving up leadership")
            await self.stop()

    async def stop(self) -> None:
        self.leading = False
        if not self.stopped:
            self.stopped = True
            await self.on_stopped()


class LeaseElection:
    """:class:`Leadership` through a Lease (kubernetes_asyncio's ``leaderelection``)."""

    def __init__(
        self,
        api: ApiClient,
        *,
        name: str,
        namespace: str,
        identity: str,
        lease_duration: int = 15,
        renew_deadline: int = 10,
        retry_period: int = 2,
    ) -> None:
        self.api = api
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._term: _Term | None = None

    def is_leader(self) -> bool:
        return self._term is not None and self._term.leading

    async def run(self, on_started: Callback, on_stopped: Callback) -> None:
        term = _Term(on_started, on_stopped)
        self._term = term
        lock = LeaseLock(self.name, self.namespace, self.identity, self.api)
        config = electionconfig.Config(
            lock,
            self.lease_duration,
            self.renew_deadline,
            self.retry_period,
            term.start,
            term.stop,
        )
        try:
            await leaderelection.LeaderElection(config).run()
        finally:
            term.leading = False


class AlwaysLeader:
    """:class:`Leadership` of a replica that is alone: it leads from the start."""

    def __init__(self, identity: str = "") -> None:
        self.identity = identity
        self._term: _Term | None = None

    def is_leader(self) -> bool:
        return self._term is not None and self._term.leading

    async def run(self, on_started: Callback, on_stopped: Callback) -> None:
        term = _Term(on_started, on_stopped)
        self._term = term
        try:
            await term.start()
        finally:
            term.leading = False
