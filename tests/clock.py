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
own virtual time instead: mark the test ``@pytest.mark.looptime`` (the ``looptime``
plugin), and ``await asyncio.sleep(3600)`` returns at once with ``loop.time()`` one
hour later.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
