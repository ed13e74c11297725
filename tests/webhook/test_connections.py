"""The connection bound's policy (webhook/connections.py): which connection makes room.

Connections here are real sockets (one end of a socketpair) on a fake
clock (tests/clock.py), so "quiet for how long" is exact.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from tests.clock import FakeClock
from webhook.connections import (
    MIN_QUIET_SECONDS,
    REUSED_MIN_QUIET_SECONDS,
    STALE_REQUEST_SECONDS,
    UNUSED_MIN_QUIET_SECONDS,
    Connection,
    ConnectionPool,
)


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    made: list[socket.socket] = []
    yield made
    for item in made:
        item.close()


def new_socket(sockets: list[socket.socket]) -> socket.socket:
    ours, theirs = socket.socketpair()
    sockets += [ours, theirs]
    return ours


async def run_request(pool: ConnectionPool, connection: Connection, **during: Any) -> None:
    """One request through the pool's middleware on ``connection``; ``during`` runs inside."""
    protocol = mock.Mock()  # stands for aiohttp's per-connection protocol object
    pool.bind(connection, protocol)
    request = make_mocked_request("POST", "/mutate-batch-v1-job", protocol=protocol)

    async def handler(_: web.Request) -> web.StreamResponse:
        if "check" in during:
            during["check"]()
        return web.Response()

    await pool.middleware()(request, handler)


def test_below_the_limit_nothing_is_closed(sockets: list[socket.socket]) -> None:
    pool = ConnectionPool(3, clock=FakeClock().monotonic)
    opened = [pool.admit(new_socket(sockets)) for _ in range(3)]
    assert pool.open_count() == 3 and not any(c.closed for c in opened) and pool.evicted == 0


def test_at_the_limit_the_quietest_connection_makes_room(sockets: list[socket.socket]) -> None:
    clock = FakeClock()
    evictions: list[str] = []
    pool = ConnectionPool(2, clock=clock.monotonic, on_evict=evictions.append)
    first = pool.admit(new_socket(sockets))
    clock.advance(1)
    second = pool.admit(new_socket(sockets))
    clock.advance(1)
    third = pool.admit(new_socket(sockets))
    assert first.closed and not second.closed and not third.closed
    assert pool.open_count() == 2 and pool.evicted == 1 and evictions == ["handshake"]


def test_a_connection_quiet_for_less_than_a_second_is_not_closed(
    sockets: list[socket.socket],
) -> None:
    # Closing a keep-alive connection its client has just picked loses that request
    # (kube-apiserver does not retry a POST): the newcomer waits instead.
    clock = FakeClock()
    pool = ConnectionPool(1, clock=clock.monotonic)
    recent = pool.admit(new_socket(sockets))
    clock.advance(MIN_QUIET_SECONDS / 2)
    assert not pool.has_room()
    clock.advance(MIN_QUIET_SECONDS / 2)
    assert pool.has_room()
    pool.admit(new_socket(sockets))
    assert recent.closed and pool.open_count() == 1


async def test_a_request_makes_a_connection_recent(sockets: list[socket.socket]) -> None:
    clock = FakeClock()
    pool = ConnectionPool(2, clock=clock.monotonic)
    first = pool.admit(new_socket(sockets))
    clock.advance(1)
    second = pool.admit(new_socket(sockets))
    clock.advance(1)
    await run_request(pool, first)  # the oldest connection just served a request
    clock.advance(1)
    pool.admit(new_socket(sockets))
    assert second.closed and not first.closed


async def test_quiet_times_grow_with_what_a_connection_has_done(
    sockets: list[socket.socket],
) -> None:
    # A silent handshake may go after MIN_QUIET_SECONDS; a TLS connection that has not
    # carried a request yet (its client may be about to send one) after
    # UNUSED_MIN_QUIET_SECONDS; one that has (it may sit in the client's pool) after
    # REUSED_MIN_QUIET_SECONDS.
    clock = FakeClock()
    evictions: list[str] = []
    pool = ConnectionPool(2, clock=clock.monotonic, on_evict=evictions.append)
    unused = pool.admit(new_socket(sockets))
    unused.transport = mock.Mock(abort=unused.socket.close)  # handshake done
    used = pool.admit(new_socket(sockets))
    used.transport = mock.Mock(abort=used.socket.close)
    await run_request(pool, used)
    clock.advance(UNUSED_MIN_QUIET_SECONDS - 0.5)
    assert not pool.has_room()
    clock.advance(0.5)
    pool.admit(new_socket(sockets))
    assert unused.closed and not used.closed and evictions == ["never_used"]
    served = used.last_active
    assert not used.evictable(served + REUSED_MIN_QUIET_SECONDS - 0.5)
    assert used.evictable(served + REUSED_MIN_QUIET_SECONDS) and used.why_evictable() == "idle"


async def test_a_request_in_progress_is_never_cut(sockets: list[socket.socket]) -> None:
    clock = FakeClock()
    pool = ConnectionPool(1, clock=clock.monotonic)
    busy = pool.admit(new_socket(sockets))
    seen: dict[str, object] = {}

    def check() -> None:
        clock.advance(STALE_REQUEST_SECONDS - 1)
        seen["room"] = pool.has_room()
        seen["admitted"] = pool.admit(new_socket(sockets))
        seen["busy_closed"] = busy.closed
        seen["open"] = pool.open_count()

    await run_request(pool, busy, check=check)
    assert seen == {"room": False, "admitted": seen["admitted"], "busy_closed": False, "open": 2}, (
        "no room while every connection is mid-request; admitted anyway it passes the bound by one"
    )
    assert not pool.has_room(), "the request just ended: its client may send the next one"
    clock.advance(REUSED_MIN_QUIET_SECONDS)
    assert pool.has_room(), "quiet for long enough now: it may be closed to make room"


async def test_a_request_nobody_waits_for_any_more_is_cut(sockets: list[socket.socket]) -> None:
    clock = FakeClock()
    pool = ConnectionPool(1, clock=clock.monotonic)
    stuck = pool.admit(new_socket(sockets))
    seen: dict[str, bool] = {}

    def check() -> None:
        clock.advance(STALE_REQUEST_SECONDS)
        seen["room"] = pool.has_room()
        pool.admit(new_socket(sockets))
        seen["stuck_closed"] = stuck.closed

    await run_request(pool, stuck, check=check)
    assert seen == {"room": True, "stuck_closed": True}


def test_a_closed_connection_leaves_the_count(sockets: list[socket.socket]) -> None:
    pool = ConnectionPool(2, clock=FakeClock().monotonic)
    gone = pool.admit(new_socket(sockets))
    pool.admit(new_socket(sockets))
    gone.socket.close()  # what asyncio does when the connection is lost
    assert pool.open_count() == 1 and pool.has_room()


def test_handshaking_connections_count_and_go_when_the_listener_stops(
    sockets: list[socket.socket],
) -> None:
    pool = ConnectionPool(5, clock=FakeClock().monotonic)
    waiting = [pool.admit(new_socket(sockets)) for _ in range(3)]
    assert pool.open_count() == 3
    pool.abort_handshakes()
    assert all(c.closed for c in waiting) and pool.open_count() == 0


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ConnectionPool(0)


def test_a_quiet_connection_with_a_request_not_read_yet_is_not_closed(
    sockets: list[socket.socket],
) -> None:
    # Under load the event loop runs behind: the API server has sent a request on a
    # pooled connection that looks quiet from here. Closing it would lose the request.
    clock = FakeClock()
    pool = ConnectionPool(1, clock=clock.monotonic)
    ours, theirs = socket.socketpair()
    sockets += [ours, theirs]
    waiting = pool.admit(ours)
    theirs.sendall(b"POST /validate HTTP/1.1\r\n")
    clock.advance(MIN_QUIET_SECONDS * 10)
    assert not pool.has_room(), "unread input: not closed"
    assert ours.recv(64)  # the event loop gets to it (peeking left it in place)
    assert pool.has_room()
    pool.admit(new_socket(sockets))
    assert waiting.closed


def test_a_connection_its_client_has_closed_makes_room(sockets: list[socket.socket]) -> None:
    clock = FakeClock()
    pool = ConnectionPool(1, clock=clock.monotonic)
    ours, theirs = socket.socketpair()
    sockets += [ours, theirs]
    gone = pool.admit(ours)
    theirs.close()  # end of stream waiting: not input anyone waits on
    clock.advance(MIN_QUIET_SECONDS)
    assert pool.has_room()
    pool.admit(new_socket(sockets))
    assert gone.closed


async def test_a_parsed_request_keeps_its_connection_until_its_handler_returns(
    sockets: list[socket.socket],
) -> None:
    clock = FakeClock()
    pool = ConnectionPool(1, clock=clock.monotonic)
    queued = pool.admit(new_socket(sockets))
    protocol = mock.Mock(_request_count=1)  # aiohttp has parsed one request
    pool.bind(queued, protocol)
    clock.advance(MIN_QUIET_SECONDS * 10)
    assert not pool.has_room(), "its handler has not started (the event loop is behind)"
    request = make_mocked_request("POST", "/convert", protocol=protocol)
    await pool.middleware()(request, lambda _: _respond())
    clock.advance(REUSED_MIN_QUIET_SECONDS)
    assert pool.has_room(), "handled, then quiet"


async def _respond() -> web.StreamResponse:
    return web.Response()


def test_the_pinned_aiohttp_counts_parsed_requests_where_the_pool_looks() -> None:
    """has_unhandled_input reads RequestHandler._request_count: an upgrade that drops it
    or stops counting parsed requests in it fails here."""
    import inspect

    from aiohttp.web_protocol import RequestHandler

    assert "_request_count" in RequestHandler.__slots__
    assert "self._request_count += 1" in inspect.getsource(RequestHandler.data_received)


def tcp_pair(sockets: list[socket.socket]) -> tuple[socket.socket, socket.socket]:
    """(server side, client side) of a loopback TCP connection: the kernel's TCP state."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    sockets += [server, client]
    return server, client


def admit_then_client_closes(
    pool: ConnectionPool, sockets: list[socket.socket], unread: bytes = b""
) -> Connection:
    """A TCP connection the pool took whose client then sent ``unread`` and closed."""
    server, client = tcp_pair(sockets)
    connection = pool.admit(server)
    if unread:
        client.sendall(unread)
    client.close()
    return connection


def test_a_connection_its_client_closed_goes_first_even_with_input_waiting(
    sockets: list[socket.socket],
) -> None:
    # Under load the API server's surplus connections (beyond the 25 it keeps idle) are
    # closed by it while the event loop is behind: those, not the live ones, make room.
    clock = FakeClock()
    pool = ConnectionPool(2, clock=clock.monotonic)
    live_server, _live_client = tcp_pair(sockets)
    live = pool.admit(live_server)
    clock.advance(MIN_QUIET_SECONDS * 10)
    # A TLS close_notify's first bytes, not read yet, then the FIN.
    closed_by_client = admit_then_client_closes(pool, sockets, unread=b"\x15\x03\x03")
    time.sleep(0.05)  # the FIN arrives
    assert closed_by_client.peer_closed and not live.peer_closed
    pool.admit(new_socket(sockets))
    assert closed_by_client.closed and not live.closed, "the dead one, though it is newer"


def test_every_connection_its_client_closed_goes_at_once(sockets: list[socket.socket]) -> None:
    clock = FakeClock()
    evictions: list[str] = []
    pool = ConnectionPool(3, clock=clock.monotonic, on_evict=evictions.append)
    live = pool.admit(tcp_pair(sockets)[0])
    dead = [admit_then_client_closes(pool, sockets) for _ in range(2)]
    time.sleep(0.05)
    pool.admit(new_socket(sockets))
    assert all(connection.closed for connection in dead) and not live.closed
    assert pool.open_count() == 2 and evictions == ["client_closed"] * 2


def test_a_handshake_the_client_has_started_is_left_to_its_timeout(
    sockets: list[socket.socket],
) -> None:
    # Under load the event loop answers a ClientHello late; resetting that connection
    # fails the API server's call. A connection that never sent a byte still goes.
    clock = FakeClock()
    pool = ConnectionPool(2, clock=clock.monotonic)
    started_server, started_client = tcp_pair(sockets)
    started = pool.admit(started_server)
    started_client.sendall(b"\x16\x03\x01")  # a ClientHello's first bytes
    time.sleep(0.05)
    assert started_server.recv(16)  # asyncio has read it and is (slowly) answering
    silent = pool.admit(tcp_pair(sockets)[0])
    clock.advance(MIN_QUIET_SECONDS * 5)
    assert started.client_started and not silent.client_started
    pool.admit(new_socket(sockets))
    assert silent.closed and not started.closed
    assert not pool.has_room(), "the started handshake waits for its timeout"
