"""The HTTPS listener: aiohttp's site, with an accept loop that counts connections first.

aiohttp's ``TCPSite`` hands its listening socket to ``loop.create_server``,
which wraps every accepted connection in TLS at once — a read buffer
(:mod:`webhook.memory`) before kuota could count it, or refuse it.
:class:`BoundedTLSSite` is the same site with kuota's own accept loop,
written with the asyncio server API only: ``loop.sock_accept`` takes the
next connection off the listen backlog once
:class:`~webhook.connections.ConnectionPool` has room for it, and
``loop.connect_accepted_socket`` runs the TLS handshake (bounded by
``ssl_handshake_timeout``) and hands the connection to aiohttp's request
handler, exactly as ``create_server`` would.  HTTP stays aiohttp's
business; so does the idle timeout (``keepalive_timeout``, set on the
runner).

A TLS goodbye is waited for at most :data:`TLS_SHUTDOWN_SECONDS`: a closed
connection keeps its memory until its socket is closed, and a peer that
never answers must not hold it for asyncio's default 30 s.

A handshake that comes to nothing (timed out, reset, not TLS, or evicted)
leaves a reference cycle inside asyncio — the exception's traceback holds
the frame that holds the transport — and with it the connection's read
buffer, until the cyclic collector happens to run.  Under a flood of
half-open connections that was most of the memory (measured: 5,000 TCP
connections that never start TLS took the process from 44 to 280 MiB
although at most 256 were open), so the listener runs the collector after
every :data:`COLLECT_AFTER_FAILED_HANDSHAKES` such handshakes: at most
32 buffers wait for it, and with the start-up heap frozen
(``gc.freeze`` in :mod:`webhook.server`) a collection scans only the live
connections' objects.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import socket
import ssl
import time
from collections.abc import Callable
from typing import Final

from aiohttp import web

from webhook.connections import Connection, ConnectionPool

ACCEPT_RETRY_SECONDS: Final = 1.0
"""Pause after accept() fails for lack of resources (EMFILE ...), as asyncio's own server does."""
TLS_SHUTDOWN_SECONDS: Final = 5.0
COLLECT_AFTER_FAILED_HANDSHAKES: Final = 32
"""Run the cyclic garbage collector after this many handshakes that came to nothing."""
LISTEN_BACKLOG: Final = 1024
"""Connections the kernel holds while every open one is mid-request (capped by somaxconn)."""

log = logging.getLogger("kuota.webhook")


class BoundedTLSSite(web.BaseSite):
    """An HTTPS site of ``runner`` whose connections ``pool`` bounds."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext,
        pool: ConnectionPool,
        handshake_timeout: float,
        backlog: int = LISTEN_BACKLOG,
    ) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._host = host
        self._port = port
        self._tls = ssl_context
        self._pool = pool
        self._handshake_timeout = handshake_timeout
        self._listener: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._handshakes: set[asyncio.Task[None]] = set()
        self._failed_handshakes = 0

    @property
    def name(self) -> str:
        return f"https://{self._host}:{self.port}"

    @property
    def port(self) -> int:
        """The bound port (the requested one before :meth:`start`; 0 picks a free one)."""
        if self._listener is not None:
            return int(self._listener.getsockname()[1])
        return self._port

    async def start(self) -> None:
        await super().start()
        family = socket.getaddrinfo(self._host, self._port, type=socket.SOCK_STREAM)[0][0]
        listener = socket.create_server(
            (self._host, self._port), family=family, backlog=self._backlog
        )
        listener.setblocking(False)
        self._listener = listener
        self._accepting = asyncio.create_task(self._accept_forever())

    async def stop(self) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
        if self._listener is not None:
            self._listener.close()
        self._pool.abort_handshakes()  # established connections: aiohttp's graceful shutdown
        await super().stop()

    async def _accept_forever(self) -> None:
        assert self._listener is not None
        loop = asyncio.get_running_loop()
        while True:
            await self._pool.wait_for_room()
            try:
                sock, _ = await loop.sock_accept(self._listener)
            except OSError as failed:
                log.warning(
                    "accept failed; retrying",
                    extra={
                        "context": {"error": str(failed), "retry_seconds": ACCEPT_RETRY_SECONDS}
                    },
                )
                await asyncio.sleep(ACCEPT_RETRY_SECONDS)
                continue
            connection = self._pool.admit(sock)
            task = loop.create_task(self._serve(connection))
            connection.handshake = task
            self._handshakes.add(task)
            task.add_done_callback(self._handshake_done(connection))

    async def _serve(self, connection: Connection) -> None:
        """TLS handshake, then the connection is aiohttp's; a failed handshake just ends it."""
        loop = asyncio.get_running_loop()
        server = self._runner.server
        assert server is not None

        def protocol() -> asyncio.BaseProtocol:
            handler = server()
            self._pool.bind(connection, handler)
            return handler

        try:
            transport, _ = await loop.connect_accepted_socket(
                protocol,
                sock=connection.socket,
                ssl=self._tls,
                ssl_handshake_timeout=self._handshake_timeout,
                ssl_shutdown_timeout=TLS_SHUTDOWN_SECONDS,
            )
        except (OSError, ssl.SSLError) as failed:  # timeout, reset, not TLS, bad client hello
            log.debug("TLS handshake failed", extra={"context": {"error": repr(failed)}})
            return
        connection.transport = transport

    def _handshake_done(self, connection: Connection) -> Callable[[asyncio.Task[None]], None]:
        def done(task: asyncio.Task[None]) -> None:
            self._handshakes.discard(task)
            connection.handshake = None  # the task's exception must not keep the connection
            if connection.transport is None:
                # No TLS connection came of it.  asyncio has already aborted the transport
                # (its reader is gone), unless the task was cancelled before it ran and the
                # socket was never wrapped: closing is idempotent, and needed for that case.
                connection.socket.close()
                self._failed_handshakes += 1
                if self._failed_handshakes % COLLECT_AFTER_FAILED_HANDSHAKES == 0:
                    started = time.perf_counter()
                    gc.collect()
                    log.debug(
                        "collected after failed TLS handshakes",
                        extra={"context": {"seconds": round(time.perf_counter() - started, 4)}},
                    )

        return done
