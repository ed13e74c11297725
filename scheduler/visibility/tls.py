"""The visibility server's TLS: its serving certificate and the front-proxy CA it trusts.

See docs/visibility.md#certificates.  The serving pair comes from a
directory holding ``tls.crt`` and ``tls.key`` (kuota's certificate Secret,
mounted; reloaded when the files change, as the webhook reloads its own), or,
when none is given, from a certificate the process makes for itself at start
for ``localhost`` and ``127.0.0.1`` (then the APIService can only skip
verification).  Client certificates are requested and must chain to the
front-proxy CA the API server publishes; that CA can change while the server
runs (the API server's ConfigMap is read again periodically), and OpenSSL
cannot forget a CA it once trusted, so each new CA gets a fresh context that
new handshakes switch to (``sni_callback``) while open connections keep theirs.
"""

from __future__ import annotations

import logging
import ssl
import tempfile
from pathlib import Path

from certs.generate import issue, new_ca
from certs.reload import CertificateReloader, server_context

log = logging.getLogger("kuota.visibility")


def _self_signed(directory: Path) -> tuple[Path, Path]:
    """A fresh pair for localhost and 127.0.0.1 in ``directory``: (cert, key) paths."""
    authority = new_ca("kuota-visibility-self-signed")
    pair = issue(
        authority,
        common_name="kuota-visibility",
        dns_names=["localhost"],
        ip_addresses=["127.0.0.1"],
        server=True,
    )
    cert, key = directory / "tls.crt", directory / "tls.key"
    pair.write(cert, key)
    with cert.open("ab") as chain:  # the leaf, then its issuer
        chain.write(authority.cert_pem)
    return cert, key


class ServingTls:
    """The contexts new connections are served with; ``context`` is the one to listen with."""

    def __init__(self, cert_dir: Path | None) -> None:
        if cert_dir is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="kuota-visibility-")
            cert, key = _self_signed(Path(self._scratch.name))
            self.self_signed = True
        else:
            cert, key = cert_dir / "tls.crt", cert_dir / "tls.key"
            self.self_signed = False
        self._client_ca = ""
        self.reloader = CertificateReloader(cert, key, on_reload=self._rebuild)
        self.context = self.reloader.context
        self.context.verify_mode = ssl.CERT_OPTIONAL
        self.context.sni_callback = self._choose
        self._current = self.context

    @property
    def loaded(self) -> bool:
        return self.reloader.loaded

    @property
    def client_ca(self) -> str:
        return self._client_ca

    def set_client_ca(self, pem: str) -> bool:
        """Trust ``pem`` (and only it) for client certificates from now on; True if it changed."""
        if pem == self._client_ca:
            return False
        self._client_ca = pem
        self._rebuild()
        return True

    def _rebuild(self) -> None:
        """A new context with the current pair and CA, for the handshakes to come."""
        if not self.reloader.loaded:
            return
        context = server_context()
        try:
            context.load_cert_chain(str(self.reloader.cert_file), str(self.reloader.key_file))
            if self._client_ca:
                context.load_verify_locations(cadata=self._client_ca)
        except (ssl.SSLError, OSError, ValueError) as failed:
            log.warning("TLS settings not changed", extra={"error": str(failed)})
            return
        context.verify_mode = ssl.CERT_OPTIONAL
        self._current = context

    def _choose(self, connection: ssl.SSLObject, _name: str | None, _: ssl.SSLContext) -> None:
        """Serve this handshake with the latest context (the hook runs for every client hello)."""
        if self._current is not self.context:
            connection.context = self._current


__all__ = ["ServingTls"]
