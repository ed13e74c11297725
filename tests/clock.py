"""The one fake clock of the unit tests, for code that is handed a clock.

Product code that reads time takes a clock argument: a wall clock (``() -> datetime``:
the executor, the event recorder, the MultiKueue controller) or a monotonic one
(``() -> float`` seconds: the Lease fence's ``CLOCK_BOOTTIME``, the webhook's connection
pool).  :class:`FakeClock` is both, moved only by the test::

    clock = FakeClock()
    recorder = EventRecorder(api, clock=clock)          # wall time
    fence = LeaseFence(..., clock=clock.monotonic)      # seconds
    clock.advance(9.5)                                  # both move together

so a test says "9.5 s later" exactly instead of sleeping.

Asynchronous code that sleeps or times out on the event loop is tested in the loop's
own virtual time instead: a test that asks for the ``loop_time`` fixture
(``tests/conftest.py``) runs on a loop whose clock is :class:`LoopTime`, so
``await asyncio.sleep(3600)`` returns at once with ``loop.time()`` one hour later,
and "backed off 0.5 s, then 1 s" is exact.  (The ``looptime`` plugin from PyPI does
this too, but its version 0.9, installed at all, leaks an event loop into the sync
tests of a module with async ones under Python 3.11 and pytest-asyncio 1.5: a
``ResourceWarning`` that this suite's ``filterwarnings = error`` turns into failures.)
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
"""Where a :class:`FakeClock` starts unless told otherwise."""


class FakeClock:
    """A wall clock and a monotonic clock that move together, only by :meth:`advance`."""

    def __init__(self, start: datetime = START, *, monotonic: float = 1000.0) -> None:
        self._now = start
        self._seconds = monotonic

    def __call__(self) -> datetime:
        """The wall time."""
        return self._now

    @property
    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        """Seconds on a monotonic clock (an arbitrary, fixed origin)."""
        return self._seconds

    def advance(self, seconds: float = 0, **delta: float) -> None:
        """Move both clocks forward: ``advance(1.5)``, ``advance(minutes=16)``."""
        step = timedelta(seconds=seconds, **delta)
        self._now += step
        self._seconds += step.total_seconds()

    def set(self, moment: datetime) -> None:
        """Move both clocks to ``moment`` (forward or back)."""
        self.advance((moment - self._now).total_seconds())


class LoopTime:
    """Virtual time for a running selector event loop: while nothing is ready to run and
    no I/O is ready, the loop does not wait for its next timer, its clock jumps to it.

    Real I/O still works (it is polled without waiting first); an idle loop with no timer
    waits for I/O in real time as usual.  Only the loop's clock is virtual: ``time.time()``
    and the wall clock are not touched.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop: Any = loop
        self._now: float = loop.time()
        self._select = self._loop._selector.select

    def __call__(self) -> float:
        """The loop's time (what ``loop.time()`` answers while installed)."""
        return self._now

    def _virtual_select(self, timeout: float | None = None) -> list[Any]:
        ready: list[tuple[selectors.SelectorKey, int]] = self._select(0)
        if ready:
            return ready
        if timeout is None:  # no timer: only I/O can wake the loop
            return self._select(None)  # type: ignore[no-any-return]
        self._now += max(timeout, 0.0)  # nothing to do until the next timer: be there now
        return ready

    @classmethod
    @contextmanager
    def installed(cls, loop: asyncio.AbstractEventLoop) -> Iterator[LoopTime]:
        clock = cls(loop)
        loop.time = clock  # type: ignore[method-assign]
        clock._loop._selector.select = clock._virtual_select
        try:
            yield clock
        finally:
            del clock._loop.time
            clock._loop._selector.select = clock._select
