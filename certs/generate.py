"""Certificate authority and leaf certificates, made with ``cryptography``.

kuota needs TLS in two places: its own webhook (the API server only calls
webhooks over verified TLS) and the local control plane of the end-to-end
suite (API server serving certificate, admin client certificate).  Both use
the same few shapes, so they live here once: a self-signed CA and leaves
signed by it, each with exactly the key usages its role needs.

Validity starts an hour in the past so that a small clock skew between
processes never makes a fresh certificate "not yet valid".
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CLOCK_SKEW = timedelta(hours=1)
PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


@dataclass(frozen=True)
class KeyPair:
    """A certificate with its private key."""

    cert: x509.Certificate
    key: PrivateKey

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def write(self, cert_path: Path, key_path: Path) -> None:
        """Write PEM files; the key is created 0600 before any byte is written."""
        cert_path.write_bytes(self.cert_pem)
        write_private(key_path, self.key_pem)

    @classmethod
    def load(cls, cert_path: Path, key_path: Path) -> KeyPair:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        if not isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)):
            raise ValueError(f"{key_path}: unsupported key type {type(key).__name__}")
        return cls(cert=cert, key=key)


def write_private(path: Path, data: bytes) -> None:
    """Write secret material readable by the owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str, organizations: Iterable[str] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def new_ca(common_name: str, *, valid_for: timedelta = timedelta(days=365)) -> KeyPair:
    """A self-signed CA that may sign leaves but not further CAs."""
    key = _new_key()
    now = datetime.now(UTC)
    name = _name(common_name)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + valid_for)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(cert=cert, key=key)


def issue(
    ca: KeyPair,
    *,
    common_name: str,
    organizations: Iterable[str] = (),
    dns_names: Iterable[str] = (),
    ip_addresses: Iterable[str] = (),
    server: bool = False,
    client: bool = False,
    valid_for: timedelta = timedelta(days=90),
) -> KeyPair:
    """A leaf signed by ``ca``; ``server``/``client`` choose the extended key usages.

    Go's TLS stack verifies subject alternative names only, never the common
    name, so a serving certificate must list every name and IP it is reached by.
    """
    if not (server or client):
        raise ValueError("a leaf certificate must be for server use, client use, or both")
    key = _new_key()
    now = datetime.now(UTC)
    usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + (
        [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organizations))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + valid_for)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False
        )
    )
    alt_names: list[x509.GeneralName] = [x509.DNSName(name) for name in dns_names]
    alt_names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    if alt_names:
        builder = builder.add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
    return KeyPair(cert=builder.sign(ca.key, hashes.SHA256()), key=key)


def new_rsa_signing_key() -> tuple[bytes, bytes]:
    """An RSA key pair for service-account tokens: (private PKCS#8 PEM, public SPKI PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public
