"""Smaller TLS buffers, and give them back to the operating system when freed (glibc).

Every TLS connection the webhook holds takes a read buffer (asyncio's
``SSLProtocol``).  glibc serves an allocation that large with its own
``mmap`` — returned to the system on ``free`` — only until the first such
block is freed: then it raises its threshold above that size (its "dynamic
mmap threshold") and every later buffer comes from the heap, where freed
memory stays with the process, and the memory of closed connections is
never returned.  Fixing the threshold
with ``mallopt(M_MMAP_THRESHOLD)`` — the documented knob, the same as the
``MALLOC_MMAP_THRESHOLD_`` environment variable — turns the dynamic
behaviour off, so each buffer is its own mapping and goes back when its
connection ends.

Measured with asyncio's 256 KiB buffers and ``kuota-webhook
--max-connections 256`` on the local machine (5,000 connections, then all
closed): TLS connections held idle, 126 → 120 MiB while open and 113 → 55
MiB once closed; TCP connections that never start TLS, 196 → 136 MiB while
open and 195 → 74 MiB once closed.  The cost is one ``mmap``/``munmap``
pair per connection.

On a C library without ``mallopt`` (musl, macOS) nothing changes.

The buffer itself is smaller too (:func:`use_small_tls_buffers`): asyncio's
256 KiB is sized for bulk transfers, while an admission or conversion review
is a few KiB and a TLS record carries at most 16 KiB of data, so 32 KiB
reads each request in one or two calls.  At 280 KiB a connection, the
connection bound had to be small (256), and the API server opens more than
that under a creation burst (its API Priority and Fairness admits up to 600
requests at once): the webhook then closed idle connections the API server
was about to reuse, and a Workload create failed with ``EOF`` (Kueue's large
scheduler benchmark, 1,000 ClusterQueues).  With 32 KiB buffers, 5,000
idle TLS connections peak at 64 MiB under a bound of 256 and at 110 MiB
under 1,024 (``make test-webhook-load``).
"""

from __future__ import annotations

import ctypes
from asyncio import sslproto
from typing import Final

M_MMAP_THRESHOLD: Final = -3
"""glibc's ``<malloc.h>`` parameter number."""
TLS_READ_BUFFER_BYTES: Final = 32 * 1024
"""asyncio's per-connection TLS read buffer, instead of its 256 KiB."""
THRESHOLD_BYTES: Final = TLS_READ_BUFFER_BYTES
"""Every TLS read buffer is its own mapping, freed on close."""


def use_small_tls_buffers() -> None:
    """Every TLS connection of this process reads through a 32 KiB buffer.

    ``SSLProtocol.max_size`` is a class constant of asyncio (the size of the
    buffer each connection allocates and of each read), the only knob there is.
    """
    sslproto.SSLProtocol.max_size = TLS_READ_BUFFER_BYTES


def return_large_buffers() -> bool:
    """Fix glibc's mmap threshold at 32 KiB; True when the C library took it."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES))
