"""Fencing: no write leaves the process unless this replica holds the Lease at that instant.

A leader that is paused (SIGSTOP, a long GC pause, a frozen VM) past its
Lease and then resumed does not *know* it lost the Lease until its next
renewal fails; meanwhile a standby may have taken over.  "We have not
noticed losing it" is therefore not enough to write.  :class:`LeaseFence`
answers "is the Lease held right now?" from one fact only: the instant the
last *successful* acquire or renew request of the Lease was **sent**.

- Another replica takes over only after it has seen the Lease unchanged for
  ``lease_duration`` seconds, counted from when *it* observed the last
  renewal, which is after the renewal was stored, which is after it was
  sent.  So until ``sent + lease_duration`` nobody else can lead.
- A write is allowed only while ``now < sent + renew_deadline``
  (:meth:`LeaseFence.write_timeout`); ``renew_deadline`` is shorter than
  ``lease_duration``, and the gap is the budget of the write itself: each
  write gets a timeout that ends at ``sent + lease_duration``, both on the
  client and as the API server's ``timeout`` request parameter, so a write
  cannot be waited for (nor, as far as the API server honours its own
  deadline, stored) after another replica may lead.
- "now" is ``CLOCK_BOOTTIME``: a monotonic clock that also counts the time
  the machine was suspended, so a frozen VM resumes with the clock already
  past the deadline.  (A stopped process's clocks all keep running.)
- The fence is *closed* between terms (:meth:`LeaseFence.close`): a write
  left over from a term that ended cannot borrow the next term's renewal.

A write the fence refuses raises :class:`Fenced`.  It is not an API error
and not logged as one: whoever gets it treats it like lost leadership (the
scheduler ends its term, rebuilds its state and campaigns again).

What is left, and why it is acceptable: the check and the bytes leaving the
socket are a few event-loop steps apart, so a process stopped exactly there
sends a stale write on resuming.  Every state-changing write of the
scheduler is conditional on the ``resourceVersion`` it was computed from,
so such a write fails against any object the new leader has changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class Fenced(Exception):
    """A write was refused because this replica may no longer hold the Lease."""


def boottime() -> float:
    """Seconds on ``CLOCK_BOOTTIME`` (monotonic, counts suspended time too)."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


class Fence(Protocol):
    """What the writer asks before every write."""

    def write_timeout(self) -> float | None:
        """Seconds the write may take (None: no bound), or raise :class:`Fenced`."""
        ...


class Unfenced:
    """The fence of a replica that is alone (``--no-leader-elect``) and of tests: always open."""

    def write_timeout(self) -> float | None:
        return None


class LeaseFence:
    """:class:`Fence` from the send instant of the last successful acquire/renew (see above)."""

    def __init__(
        self,
        *,
        lease_duration: float,
        renew_deadline: float,
        clock: Callable[[], float] = boottime,
    ) -> None:
        if renew_deadline >= lease_duration:
            raise ValueError("the renew deadline must be shorter than the lease duration")
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.clock = clock
        self.sent: float | None = None
        """``clock()`` when the last successful acquire/renew request was sent."""
        self.open = False
        """Whether a term is running (writes are refused between terms)."""

    def renewed(self, sent: float) -> None:
        """An acquire/renew request sent at ``sent`` succeeded."""
        if self.sent is None or sent > self.sent:
            self.sent = sent

    def start_term(self) -> None:
        self.open = True

    def close(self) -> None:
        """The term ended: refuse every write until the next term starts."""
        self.open = False

    def may_write(self) -> bool:
        """Whether a write may be sent now: in a term, and before ``sent + renew_deadline``."""
        return (
            self.open and self.sent is not None and self.clock() < self.sent + self.renew_deadline
        )

    def write_timeout(self) -> float:
        """Seconds until ``sent + lease_duration`` (the write's timeout), else :class:`Fenced`."""
        now = self.clock()
        if not self.open or self.sent is None:
            raise Fenced("not leading")
        if now >= self.sent + self.renew_deadline:
            raise Fenced(
                f"the Lease was last renewed {now - self.sent:.1f}s ago "
                f"(renew deadline {self.renew_deadline:g}s): it may be held by another replica"
            )
        return self.sent + self.lease_duration - now
