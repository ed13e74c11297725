"""Serving certificates that change on disk, picked up without a restart.

A mounted Secret (or ``python -m certs bootstrap`` renewing one) replaces
``tls.crt``/``tls.key`` while the webhook runs.  :class:`CertificateReloader`
owns one ``ssl.SSLContext`` for the server's whole life and loads the new
pair *into that same context*: OpenSSL uses the context's current
certificate for every new handshake, while connections already open keep
the session they negotiated, so nothing is dropped.

Changes are found by polling (modification time, size and inode of both
files — an atomic rename by kubelet changes the inode).  A pair that does
not load (half-written, key not matching) is reported and the previous one
stays in use; the next poll tries again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("kuota.certs")
Fingerprint = tuple[tuple[int, int, int], ...]


def server_context() -> ssl.SSLContext:
    """A TLS server context with modern defaults and no certificate yet."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


class CertificateReloader:
    """Loads a certificate pair into one SSL context and reloads it when the files change."""

    def __init__(
        self,
        cert_file: Path,
        key_file: Path,
        *,
        context: ssl.SSLContext | None = None,
        on_reload: Callable[[], None] | None = None,
    ) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self.context = context or server_context()
        self.loaded = False
        self.reloads = 0
        self._seen: Fingerprint | None = None
        self._on_reload = on_reload

    def _fingerprint(self) -> Fingerprint | None:
        try:
            stats = [os.stat(path) for path in (self.cert_file, self.key_file)]
        except OSError:
            return None
        return tuple((stat.st_mtime_ns, stat.st_size, stat.st_ino) for stat in stats)

    def check(self) -> bool:
        """Load the pair if it is new; True when a (re)load happened.  Never raises."""
        fingerprint = self._fingerprint()
        if fingerprint is None or fingerprint == self._seen:
            return False
        try:
            self.context.load_cert_chain(str(self.cert_file), str(self.key_file))
        except (ssl.SSLError, OSError, ValueError) as failed:
            log.warning(
                "certificate pair not loaded; keeping the previous one",
                extra={"context": {"cert": str(self.cert_file), "error": str(failed)}},
            )
            return False
        first = not self.loaded
        self._seen, self.loaded = fingerprint, True
        if not first:
            self.reloads += 1
            log.info(
                "serving certificate reloaded", extra={"context": {"cert": str(self.cert_file)}}
            )
            if self._on_reload:
                self._on_reload()
        return True

    async def wait_until_loaded(self, timeout: float, interval: float = 0.2) -> bool:
        """Poll until a pair loads or ``timeout`` passes; True when loaded."""
        deadline = time.monotonic() + timeout
        while not self.check() and not self.loaded:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(interval)
        return True

    async def watch(self, interval: float) -> None:
        """Check the files every ``interval`` seconds until cancelled."""
        while True:
            await asyncio.sleep(interval)
            self.check()
