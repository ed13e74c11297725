"""``python -m certs generate`` and the renewal decision."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509

from certs import files
from certs.__main__ import main


def test_generate_writes_a_ca_and_a_serving_certificate_for_the_names(tmp_path: Path) -> None:
    assert (
        main(["generate", "--ip", "127.0.0.1", "--dns", "localhost", "--out", str(tmp_path)]) == 0
    )
    serving = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    ca = x509.load_pem_x509_certificate((tmp_path / "ca.crt").read_bytes())
    serving.verify_directly_issued_by(ca)
    assert (tmp_path / "tls.key").stat().st_mode & 0o077 == 0
    assert (
        main(["generate", "--dns", "kuota-webhook.kueue-system.svc", "--out", str(tmp_path)]) == 0
    )
    assert (tmp_path / "ca.crt").read_bytes() == ca.public_bytes(
        __import__(
            "cryptography.hazmat.primitives.serialization", fromlist=["Encoding"]
        ).Encoding.PEM
    ), "the CA is kept"


def test_generate_needs_a_name(tmp_path: Path) -> None:
    assert main(["generate", "--out", str(tmp_path)]) == 2


def test_renewal_is_due_within_the_margin() -> None:
    pair = files.make(dns_names=["x"], ip_addresses=[], valid_days=90).serving
    now = datetime.now(UTC)
    assert not files.needs_renewal(pair.cert_pem, before=timedelta(days=30), now=now)
    assert files.needs_renewal(
        pair.cert_pem, before=timedelta(days=30), now=now + timedelta(days=61)
    )
