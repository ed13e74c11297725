"""How many connections the webhook holds open, and which one it closes first.

Why a bound at all: every open TLS connection costs the
process memory — asyncio's ``SSLProtocol`` keeps a read buffer per
connection (256 KiB by default, 32 KiB here: :mod:`webhook.memory`),
OpenSSL the rest.  Measured on the local machine with asyncio's default:
1,000 idle connections took the webhook from 44 to 319 MiB; about 1,700
exceed the chart's 512 Mi limit, and then no queued Job can be created.
With the smaller buffer a connection costs about 64 KiB, and the bound
(1,024 by default) is above what one API server opens in a burst.

The policy, kept by :class:`ConnectionPool`:

* at most ``limit`` connections are open, counting those still in their
  TLS handshake (the read buffer is taken at accept time, before a single
  byte of TLS);
* a connection beyond the limit makes room by closing, first, those their
  clients have already closed (TCP ``CLOSE_WAIT``, not yet seen by the event
  loop: :attr:`Connection.peer_closed`), else the one that has been quiet
  the longest, for long enough for what it is: a TLS handshake whose client
  has sent nothing, :data:`MIN_QUIET_SECONDS`; a TLS connection that has
  carried no request yet, :data:`UNUSED_MIN_QUIET_SECONDS`; one that has,
  :data:`REUSED_MIN_QUIET_SECONDS`; or a request older than
  :data:`STALE_REQUEST_SECONDS` (30 s, the API server's largest
  ``timeoutSeconds``: nobody waits for that answer any more);
* never a connection with a younger request in progress, with input not
  handled yet (a request the event loop has not got to:
  :meth:`Connection.has_unhandled_input`), or in a TLS handshake the client
  has started (:attr:`Connection.client_started`; the handshake timeout
  bounds it).  When every open connection is one of those, the next
  connection waits in the listen backlog until one qualifies (the kernel
  holds it, at no cost to the process).

Why the minimum quiet time: closing a keep-alive connection the client has
just picked for its next request loses that request.  kube-apiserver's
HTTP client does not retry a POST whose connection the server closed (Go
retries only idempotent requests), so with ``failurePolicy: Fail`` the
user's write is refused ("failed calling webhook ...: EOF").  Seen with
Kueue's large scheduler benchmark (1,000 ClusterQueues created at 1,000
requests per second): the API server opened more than ``limit``
connections, the webhook closed connections idle for milliseconds, and
the run aborted within 27 s.  A waiting dial costs the API server nothing:
Go's transport sends a request on whichever comes first, a new connection
or one another request gives back, so under a burst the backlog drains as
requests finish.

Why the longer quiet times (Kueue's large benchmark again, 50,000
Workloads created at 1,000 a second on 2 cores): client-go keeps 25 idle
connections per host, so past 25 calls at once every call dials a new
connection, and the connection count swung between about 30 and 1,024
every second.  At the bound, closing connections quiet for a second cut
calls the API server had just dialed or pooled: about 1,000 creates
refused per run (connection reset, broken pipe, EOF).  With the client's
closed connections closed first, unhandled input and started handshakes
left alone, and the quiet times above, the 50,000 creates went through
without one failed call.

Why close the quietest rather than refuse the newest: with refusal, anyone
who opens ``limit`` idle connections locks the API server out until they
time out, and every queued Job is refused (``failurePolicy: Fail``).
Closing the quietest keeps serving new connections, the API server's
included, and never touches a request in progress: an idle flood delays
the API server's new connections by at most
:data:`UNUSED_MIN_QUIET_SECONDS` (its pooled ones keep working meanwhile).

Idle and handshake time are bounded elsewhere, by aiohttp's
``keepalive_timeout`` and asyncio's ``ssl_handshake_timeout``
(:mod:`webhook.listener`).  The pool learns that a connection is busy from
:meth:`ConnectionPool.middleware` (one aiohttp middleware), and that it has
ended from its socket: asyncio closes the socket it was given when the
connection is lost, so ``fileno() == -1`` is the one reliable signal for
every way a connection can end (handshake failure, timeout, peer, abort).
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

STALE_REQUEST_SECONDS: Final = 30.0
"""A request older than this is waited for by nobody: kube-apiserver's timeoutSeconds is ≤ 30."""

TCP_CLOSE_WAIT: Final = 8
"""The TCP state of a connection whose peer has closed its side (Linux ``tcp_states.h``)."""
TCP_INFO_BYTES_RECEIVED: Final = 128
"""Offset of ``tcpi_bytes_received`` (u64) in Linux's ``struct tcp_info`` (since 4.1)."""

DEAD_SCAN_SECONDS: Final = 0.1
"""At the bound, connections are checked for a client that has closed at most this often."""

MIN_QUIET_SECONDS: Final = 1.0
"""A connection still in its TLS handshake, the client silent, may go after this long."""
UNUSED_MIN_QUIET_SECONDS: Final = 10.0
"""A TLS connection that has not carried a request yet may go after this long.  Go's
client dials a connection for a call and sends the request when its goroutine next runs:
with both cores busy that took more than a second (Kueue's large benchmark: 1,345 such
connections closed at a one-second rule, their requests reset), so ten."""
REUSED_MIN_QUIET_SECONDS: Final = 90.0
"""A connection that has carried a request may sit in its client's pool and be reused at
any moment, until the client drops it after 90 s idle (Go's ``IdleConnTimeout``,
kube-apiserver's webhook client): it goes only after that."""
QUIET_SECONDS: Final = {
    "handshake": MIN_QUIET_SECONDS,
    "never_used": UNUSED_MIN_QUIET_SECONDS,
    "idle": REUSED_MIN_QUIET_SECONDS,
}


@dataclass(eq=False, slots=True)
class Connection:
    """One accepted connection: its socket, and what it is doing."""

    socket: socket.socket
    last_active: float
    protocol: object | None = None
    """aiohttp's protocol object for this connection (``request.protocol``), once made."""
    transport: asyncio.Transport | None = None
    """The TLS transport, once the handshake is done."""
    handshake: asyncio.Task[None] | None = None
    busy_since: float | None = None
    handled: int = 0
    """Requests on this connection whose handler has returned (the pool's middleware)."""

    def why_evictable(self) -> str:
        """What kind of connection this is, as the eviction metric labels it: pure."""
        if self.busy_since is not None:
            return "stale_request"
        if self.transport is None:
            return "handshake"
        return "never_used" if self.handled == 0 else "idle"

    @property
    def closed(self) -> bool:
        return self.socket.fileno() < 0

    def evictable(self, now: float) -> bool:
        """Pure: quiet for long enough for what it is (:meth:`why_evictable`), or in a
        request nobody waits for any more."""
        if self.busy_since is not None:
            return now - self.busy_since >= STALE_REQUEST_SECONDS
        return now - self.last_active >= QUIET_SECONDS[self.why_evictable()]

    def _tcp_info(self, length: int) -> bytes | None:
        """The kernel's ``struct tcp_info`` of this connection (its first ``length`` bytes),
        None where the kernel does not say (not Linux, not TCP)."""
        option = getattr(socket, "TCP_INFO", None)
        if option is None:
            return None
        try:
            info = self.socket.getsockopt(socket.IPPROTO_TCP, option, length)
        except OSError:
            return None
        return info if len(info) == length else None

    @property
    def client_started(self) -> bool:
        """Whether the client has sent anything at all (read by this process or not).

        A TLS handshake the client has started is not closed to make room: under
        load the event loop takes more than a second to answer a ClientHello, and
        the API server's new connection would be reset mid-handshake.  The
        handshake timeout bounds it.  One that never sent a byte may go.  False
        where the kernel does not say (the quiet time alone decides then).
        """
        info = self._tcp_info(TCP_INFO_BYTES_RECEIVED + 8)
        if info is None:
            return False
        (received,) = struct.unpack_from("=Q", info, TCP_INFO_BYTES_RECEIVED)
        return bool(received)

    @property
    def peer_closed(self) -> bool:
        """Whether the client has closed its side (TCP ``CLOSE_WAIT``), seen before the
        event loop gets to it: such a connection carries nothing any more.

        The API server closes every connection beyond the 25 it keeps idle as soon
        as its request returns; under load, hundreds of those wait here for the
        event loop, and they, not the live ones, are what the bound should close.
        False where the kernel does not say (not Linux, not TCP).
        """
        info = self._tcp_info(1)
        return info is not None and info[0] == TCP_CLOSE_WAIT

    def has_unhandled_input(self) -> bool:
        """Whether the client has sent something this process has not handled yet.

        Either bytes still in the kernel's receive buffer (a ClientHello or a
        request the event loop has not read), or a request aiohttp has parsed
        whose handler has not returned yet (aiohttp counts the requests it
        parses; the pool's middleware counts those handled).  Under load the
        event loop runs behind, and a connection the API server has just sent
        a request on looks quiet from here; closing it loses that request.  Peeking changes
        nothing: the bytes stay for asyncio to read.  An end of stream (the
        client closed) is not input.
        """
        try:
            if self.socket.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                return True
        except (BlockingIOError, InterruptedError):
            pass  # nothing waiting
        except OSError:
            return False  # reset or closed: nothing anyone waits for
        # RequestHandler._request_count: requests parsed on this connection (the test
        # suite checks that the pinned aiohttp still has it and counts that way).
        parsed = getattr(self.protocol, "_request_count", None)
        return isinstance(parsed, int) and parsed > self.handled

    def abort(self) -> None:
        """Close at once, without a TLS goodbye (nothing is in flight that anyone waits for)."""
        if self.transport is not None:
            self.transport.abort()
        elif self.handshake is not None and not self.handshake.done():
            self.handshake.cancel()
        else:
            self.socket.close()


class ConnectionPool:
    """The open connections of one listener, oldest activity first."""

    def __init__(
        self,
        limit: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_evict: Callable[[str], None] = lambda why: None,
    ) -> None:
        if limit < 1:
            raise ValueError(f"the connection limit must be at least 1, got {limit}")
        self.limit = limit
        self.evicted = 0
        self._clock = clock
        self._on_evict = on_evict
        self._open: OrderedDict[Connection, None] = OrderedDict()
        self._by_protocol: dict[object, Connection] = {}
        self._last_dead_scan = float("-inf")

    def open_count(self) -> int:
        """Connections open now (handshaking ones included)."""
        self._forget_closed()
        return len(self._open)

    def has_room(self) -> bool:
        """Whether one more connection can be taken now, closing a quiet one if need be."""
        if self.open_count() < self.limit:
            return True
        if self._close_dead():
            return True
        return self._quietest() is not None

    async def wait_for_room(self, poll_seconds: float = 0.05) -> None:
        """Return once :meth:`has_room`; polls while every connection is mid-request."""
        while not self.has_room():
            await asyncio.sleep(poll_seconds)

    def admit(self, sock: socket.socket) -> Connection:
        """Take ``sock`` in; at the limit, the quietest connection is closed to make room.

        If the quietest became busy since :meth:`has_room` said yes, the new
        connection is still taken: the bound is passed by one for as long as
        that request lasts, never by more (the accept loop waits for room
        before the next accept).
        """
        if self.open_count() >= self.limit and not self._close_dead():
            victim = self._quietest()
            if victim is not None:
                self._close(victim, victim.why_evictable())
        connection = Connection(socket=sock, last_active=self._clock())
        self._open[connection] = None
        return connection

    def bind(self, connection: Connection, protocol: object) -> None:
        """Record the aiohttp protocol object serving ``connection``."""
        connection.protocol = protocol
        self._by_protocol[protocol] = connection

    def abort_handshakes(self) -> None:
        """Close every connection still in its TLS handshake (the listener is going away)."""
        for connection in list(self._open):
            if connection.transport is None:
                self._drop(connection)
                connection.abort()

    def middleware(self) -> Middleware:
        """An aiohttp middleware that marks the request's connection busy while it runs."""

        @web.middleware
        async def track_busy(request: web.Request, handler: Handler) -> web.StreamResponse:
            connection = self._by_protocol.get(request.protocol)
            if connection is None:  # not one of this pool's connections
                return await handler(request)
            connection.busy_since = self._touch(connection)
            try:
                return await handler(request)
            finally:
                connection.busy_since = None
                connection.handled += 1
                self._touch(connection)

        return track_busy

    def _touch(self, connection: Connection) -> float:
        now = self._clock()
        connection.last_active = now
        if connection in self._open:
            self._open.move_to_end(connection)
        return now

    def _close(self, connection: Connection, why: str) -> None:
        self._drop(connection)
        connection.abort()
        self.evicted += 1
        self._on_evict(why)

    def _close_dead(self) -> int:
        """Close every connection its client has closed (:attr:`Connection.peer_closed`);
        how many.  One system call per connection, so at most every
        :data:`DEAD_SCAN_SECONDS`: a flood of live connections is not scanned per accept."""
        now = self._clock()
        if now - self._last_dead_scan < DEAD_SCAN_SECONDS:
            return 0
        self._last_dead_scan = now
        dead = [
            connection
            for connection in self._open
            if not connection.closed and connection.busy_since is None and connection.peer_closed
        ]
        for connection in dead:
            self._close(connection, "client_closed")
        return len(dead)

    def _quietest(self) -> Connection | None:
        now = self._clock()
        for connection in self._open:  # oldest activity first
            if (
                not connection.closed
                and connection.evictable(now)
                and not connection.has_unhandled_input()
                and not (connection.why_evictable() == "handshake" and connection.client_started)
            ):
                return connection
        return None

    def _drop(self, connection: Connection) -> None:
        self._open.pop(connection, None)
        if connection.protocol is not None:
            self._by_protocol.pop(connection.protocol, None)

    def _forget_closed(self) -> None:
        for connection in [c for c in self._open if c.closed]:
            self._drop(connection)
