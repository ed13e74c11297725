"""``python e2e/cluster/netns_forward.py NETNS PORT``: the API server, reachable from the machine.

A cluster with a real node runs in a private network namespace
(:mod:`e2e.cluster.netns`) that has no link to the machine's network.  This
process listens on the machine's 127.0.0.1:PORT, then enters the namespace
and connects each client to 127.0.0.1:PORT in there: the listening socket
stays in the namespace it was made in, new sockets are made in the new one.
TLS passes through untouched (the API server's certificate names
127.0.0.1), so one kubeconfig serves the harness, kubectl and helm on the
machine and the control-plane components inside the namespace.

Standard library only, and run by its path: the harness's venv does not
install the ``e2e`` package, and this process starts in the cluster's
working directory.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import socket
import sys
from pathlib import Path

_CLONE_NEWNET = 0x40000000


def setns(path: str | Path) -> None:
    """Move the calling thread into the network namespace at ``path``."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"setns({path}): {os.strerror(errno)}")
    finally:
        os.close(fd)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def serve(listener: socket.socket, port: int) -> None:
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(_pipe(client_r, server_w), _pipe(server_r, client_w))

    server = await asyncio.start_server(handle, sock=listener)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    netns_path, port_text = argv if argv is not None else sys.argv[1:]
    port = int(port_text)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    setns(netns_path)  # before any thread exists: the whole process moves
    asyncio.run(serve(listener, port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
