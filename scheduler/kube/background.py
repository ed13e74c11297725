"""Writes that run while the scheduler goes on: bounded, awaited at the end of a term.

The engine already counts each decision when it makes it (the assumption),
so admissions and evictions are written in the background while the next
cycle runs, at most ``concurrent_writes`` at a time.  A write that fails is
handled in its own task (forget, decide again); one that raises (say,
:class:`~scheduler.kube.fence.Fenced`) is kept and raised by
:meth:`BackgroundWrites.raise_failures`, which ends the term.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar, cast

T = TypeVar("T")


class BackgroundWrites:
    """Tasks writing in the background, and what they ended with."""

    def __init__(self, concurrent_writes: int = 16) -> None:
        self._slots = asyncio.Semaphore(concurrent_writes)
        self._in_flight: set[asyncio.Task[None]] = set()
        self._failures: list[BaseException] = []

    async def bounded(self, actions: Iterable[Awaitable[T]]) -> list[T]:
        """Run independent API actions with at most ``concurrent_writes`` in flight."""

        async def one(action: Awaitable[T]) -> T:
            async with self._slots:
                return await action

        # Every action ends before this returns, even when one fails (say, fenced):
        # no write of this turn may still be running when the term ends.
        results = await asyncio.gather(*(one(action) for action in actions), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return cast(list[T], results)

    def start(self, write: Callable[[], Awaitable[None]]) -> None:
        """Run ``write`` in the background, within the bound."""

        async def one() -> None:
            async with self._slots:
                await write()

        task = asyncio.get_running_loop().create_task(one())
        self._in_flight.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._failures.append(cast(BaseException, task.exception()))

    def __len__(self) -> int:
        """The writes in flight."""
        return len(self._in_flight)

    def raise_failures(self) -> None:
        """Raise the first exception a background write ended with (once)."""
        if self._failures:
            failure = self._failures[0]
            self._failures.clear()
            raise failure

    async def settle(self) -> None:
        """Wait until every background write has ended; raise the first failure."""
        while self._in_flight:
            await asyncio.gather(*list(self._in_flight), return_exceptions=True)
        self.raise_failures()

    async def stop(self) -> None:
        """End of a term: wait for the writes in flight (each bounded by the fence's timeout)
        and drop what they ended with; raise nothing."""
        while self._in_flight:
            await asyncio.gather(*list(self._in_flight), return_exceptions=True)
        self._failures.clear()
