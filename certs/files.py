"""The on-disk layout of kuota's webhook certificates, shared by every certs command.

A directory holds ``ca.crt``/``ca.key`` (the CA) and ``tls.crt``/``tls.key``
(the serving pair) — the key names of a Kubernetes TLS Secret plus the CA,
so the same directory can be mounted from a Secret or written by ``python -m
certs generate``.  Files are replaced atomically (write a temporary file,
rename), so a webhook polling them never reads half a certificate.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509

from certs.generate import KeyPair, issue, new_ca

CA_CERT, CA_KEY, TLS_CERT, TLS_KEY = "ca.crt", "ca.key", "tls.crt", "tls.key"


@dataclass(frozen=True)
class WebhookCertificates:
    ca: KeyPair
    serving: KeyPair


def make(
    *,
    dns_names: Iterable[str],
    ip_addresses: Iterable[str],
    ca: KeyPair | None = None,
    valid_days: int = 90,
    common_name: str = "kuota-webhook",
) -> WebhookCertificates:
    """A CA (new unless given) and a serving certificate for the given names."""
    dns, ips = list(dns_names), list(ip_addresses)
    if not dns and not ips:
        raise ValueError("a serving certificate needs at least one --dns name or --ip address")
    authority = ca or new_ca("kuota-webhook-ca", valid_for=timedelta(days=max(3650, valid_days)))
    serving = issue(
        authority,
        common_name=dns[0] if dns else common_name,
        dns_names=dns,
        ip_addresses=ips,
        server=True,
        valid_for=timedelta(days=valid_days),
    )
    return WebhookCertificates(ca=authority, serving=serving)


def atomic_write(path: Path, data: bytes, *, private: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o600 if private else 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write(directory: Path, certificates: WebhookCertificates) -> None:
    """Write the four files; the serving pair last, key before certificate."""
    atomic_write(directory / CA_CERT, certificates.ca.cert_pem, private=False)
    atomic_write(directory / CA_KEY, certificates.ca.key_pem, private=True)
    atomic_write(directory / TLS_KEY, certificates.serving.key_pem, private=True)
    atomic_write(directory / TLS_CERT, certificates.serving.cert_pem, private=False)


def load_ca(directory: Path) -> KeyPair | None:
    if not (directory / CA_CERT).is_file() or not (directory / CA_KEY).is_file():
        return None
    return KeyPair.load(directory / CA_CERT, directory / CA_KEY)


def expires_at(cert_pem: bytes) -> datetime:
    return x509.load_pem_x509_certificate(cert_pem).not_valid_after_utc


def needs_renewal(cert_pem: bytes, *, before: timedelta, now: datetime | None = None) -> bool:
    """Pure: whether a certificate expires within ``before`` (or already has)."""
    moment = now or datetime.now(UTC)
    return expires_at(cert_pem) - moment <= before


def covers(cert_pem: bytes, dns_names: Iterable[str]) -> bool:
    """Whether the certificate names every one of ``dns_names`` (a chart upgrade may add
    some: the metrics Services'): pure."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return not list(dns_names)
    return set(dns_names) <= set(names.get_values_for_type(x509.DNSName))
