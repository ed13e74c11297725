"""A tiny synchronous REST client for the harness itself.

The harness runs before any event loop exists (CLI, session fixture) and
needs a handful of calls: readiness probes, creating Nodes, waiting for the
default ServiceAccount.  A dozen lines over ``http.client`` keep it free of
the async client that the tests and kuota use.
"""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Response:
    status: int
    body: Any


def tls_context(
    *, ca_file: Path | None, cert_file: Path | None = None, key_file: Path | None = None
) -> ssl.SSLContext:
    """Verify with ``ca_file``; without it, do not verify (component health ports)."""
    if ca_file is None:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context = ssl.create_default_context(cafile=str(ca_file))
    if cert_file and key_file:
        context.load_cert_chain(str(cert_file), str(key_file))
    return context


def request(
    url: str,
    *,
    method: str = "GET",
    body: Any = None,
    context: ssl.SSLContext | None = None,
    timeout: float = 10.0,
) -> Response:
    """One HTTP(S) request; JSON in, JSON (or text) out.  Raises OSError when unreachable."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=timeout, context=context
        )
    else:
        connection = http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=timeout
        )
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    payload = None if body is None else json.dumps(body).encode()
    headers = {"Accept": "application/json"}
    if payload is not None:
        headers["Content-Type"] = "application/json"
    try:
        connection.request(method, path or "/", body=payload, headers=headers)
        reply = connection.getresponse()
        raw = reply.read().decode(errors="replace")
    finally:
        connection.close()
    try:
        parsed: Any = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        parsed = raw
    return Response(status=reply.status, body=parsed)


class AdminClient:
    """Admin-certificate access to one API server."""

    def __init__(self, *, server: str, ca_file: Path, cert_file: Path, key_file: Path) -> None:
        self.server = server.rstrip("/")
        self._context = tls_context(ca_file=ca_file, cert_file=cert_file, key_file=key_file)

    def call(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Response:
        return request(
            self.server + path, method=method, body=body, context=self._context, timeout=timeout
        )
