"""``python -m certs generate`` and the renewal decision."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
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


@pytest.fixture(autouse=True)
def _logging_put_back(restore_logging: None) -> None:
    """``bootstrap`` configures logging for its process."""


def _bootstrap_options(
    monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> tuple[int, list[object]]:
    """Run ``python -m certs bootstrap`` with the cluster part replaced: the options it got."""
    import certs.bootstrap

    seen: list[object] = []

    async def run(options: object, *, watch: bool, interval: float) -> int:
        seen.append(options)
        return 0

    monkeypatch.setattr(certs.bootstrap, "run", run)
    return main(["bootstrap", *argv]), seen


def test_bootstrap_takes_kueues_internal_cert_management_from_the_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nnamespace: kq\n"
        "internalCertManagement:\n  webhookServiceName: hooks\n  webhookSecretName: hooks-cert\n"
    )
    code, seen = _bootstrap_options(monkeypatch, ["--config", str(config)])
    assert code == 0
    (options,) = seen
    assert (options.namespace, options.secret) == ("kq", "hooks-cert")  # type: ignore[attr-defined]
    assert options.dns_names == ("hooks.kq.svc", "hooks.kq.svc.cluster.local")  # type: ignore[attr-defined]
    code, seen = _bootstrap_options(
        monkeypatch, ["--config", str(config), "--secret", "mine", "--namespace", "ns"]
    )
    assert (seen[0].namespace, seen[0].secret) == ("ns", "mine")  # type: ignore[attr-defined]


def test_bootstrap_without_internal_cert_management_does_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "internalCertManagement:\n  enable: false\n"
    )
    assert _bootstrap_options(monkeypatch, ["--config", str(config)]) == (0, [])
    config.write_text("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nbogus: 1\n")
    assert _bootstrap_options(monkeypatch, ["--config", str(config)]) == (1, [])


def test_bootstrap_defaults_are_kuotas_without_a_configuration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, seen = _bootstrap_options(monkeypatch, [])
    assert (seen[0].namespace, seen[0].secret) == (  # type: ignore[attr-defined]
        "kueue-system",
        "kuota-webhook-server-cert",
    )
    assert seen[0].dns_names[0] == "kuota-webhook-service.kueue-system.svc"  # type: ignore[attr-defined]
