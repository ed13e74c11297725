"""The process: TLS from files, reload without dropping, probes, metrics, shutdown, --help."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography import x509

from certs import files
from webhook.server import serve
from webhook.settings import WebhookSettings, build_parser

from .reviews import QUEUE, admission_review, job


def client_context(ca_file: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca_file))


def serial_of(writer: asyncio.StreamWriter) -> int:
    der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    return x509.load_der_x509_certificate(der).serial_number


async def http_get(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str
) -> tuple[int, str]:
    """One HTTP/1.1 keep-alive GET on an open connection."""
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    head = (await reader.readuntil(b"\r\n\r\n")).decode()
    length = next(
        int(line.split(":", 1)[1])
        for line in head.split("\r\n")
        if line.lower().startswith("content-length")
    )
    return int(head.split()[1]), (await reader.readexactly(length)).decode()


async def start(
    tmp_path: Path, **overrides: Any
) -> tuple[asyncio.Task[int], asyncio.Event, int, int, int]:
    import socket

    ports = []
    for _ in range(3):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    settings = WebhookSettings(
        port=ports[0],
        probe_port=ports[1],
        metrics_address=f"127.0.0.1:{ports[2]}",
        metrics_secure=False,
        cert_file=tmp_path / "tls.crt",
        key_file=tmp_path / "tls.key",
        cert_reload_seconds=0.1,
        cluster_lookups=False,
        shutdown_grace_seconds=2,
        **overrides,
    )
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, stop=stop))
    return task, stop, ports[0], ports[1], ports[2]


async def wait_for(check: Any, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_tls_serving_readiness_and_reload_without_dropping_connections(
    tmp_path: Path,
) -> None:
    task, stop, port, probe_port, metrics_port = await start(tmp_path)
    async with aiohttp.ClientSession() as plain:

        async def probe_status() -> int:
            try:
                async with plain.get(f"http://127.0.0.1:{probe_port}/readyz") as reply:
                    return reply.status
            except aiohttp.ClientConnectionError:
                return 0

        await wait_for(lambda: _is(probe_status, 503))  # up, but no certificate yet
        first = files.make(dns_names=["localhost"], ip_addresses=["127.0.0.1"])
        files.write(tmp_path, first)
        await wait_for(lambda: _is(probe_status, 200))
    context = client_context(tmp_path / "ca.crt")
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=context
    )  # one kept-alive connection
    old_serial = serial_of(writer)
    assert (await http_get(reader, writer, "/readyz"))[0] == 200
    files.write(
        tmp_path, files.make(dns_names=["localhost"], ip_addresses=["127.0.0.1"], ca=first.ca)
    )
    renewed = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes()).serial_number
    assert renewed != old_serial

    async def new_connections_see_the_new_certificate() -> bool:
        _, fresh = await asyncio.open_connection("127.0.0.1", port, ssl=context)
        try:
            return serial_of(fresh) == renewed
        finally:
            fresh.close()

    await wait_for(new_connections_see_the_new_certificate)
    status, _ = await http_get(reader, writer, "/healthz")  # the open connection was not dropped
    assert status == 200 and serial_of(writer) == old_serial
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session:
        async with session.post(
            f"https://127.0.0.1:{port}/mutate-batch-v1-job",
            json=admission_review(job(labels={QUEUE: "q"})),
        ) as reply:
            assert (
                reply.status == 200 and (await reply.json())["response"]["patchType"] == "JSONPatch"
            )
    assert (await http_get(reader, writer, "/metrics"))[0] == 404, "not on the admission port"
    async with aiohttp.ClientSession() as plain:
        async with plain.get(f"http://127.0.0.1:{metrics_port}/metrics") as reply:
            text = await reply.text()
    assert (
        'kuota_webhook_requests_total{endpoint="/mutate-batch-v1-job",outcome="patched"} 1.0'
        in text
    )
    assert "kuota_webhook_request_duration_seconds_bucket" in text
    writer.close()
    stop.set()
    assert await asyncio.wait_for(task, 10) == 0


async def _is(probe: Any, expected: int) -> bool:
    return bool(await probe() == expected)


async def test_a_missing_certificate_ends_the_process_with_1(tmp_path: Path) -> None:
    task, *_ = await start(tmp_path, cert_wait_seconds=0.3)
    assert await asyncio.wait_for(task, 10) == 1


def test_sigterm_stops_the_process_gracefully(tmp_path: Path) -> None:
    files.write(tmp_path, files.make(dns_names=["localhost"], ip_addresses=["127.0.0.1"]))
    argv = [sys.executable, "-m", "webhook.server", "--cert-dir", str(tmp_path), "--port", "0"]
    with subprocess.Popen(
        [*argv, "--no-cluster-lookups"], stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert '"msg": "serving"' in line, line
        process.terminate()
        assert process.wait(timeout=15) == 0
        assert '"msg": "shutting down"' in process.stderr.read()


def test_help_documents_every_flag() -> None:
    parser = build_parser()
    text = parser.format_help()
    for action in parser._actions:
        for flag in action.option_strings:
            assert flag in text
        if action.option_strings and action.dest != "help":
            assert action.help, f"{action.option_strings} has no help text"
    assert "--manage-jobs-without-queue-name" in text and "--scheduler-identity" in text


@pytest.mark.parametrize(
    "argv, field, value",
    [
        (["--manage-jobs-without-queue-name"], "manage_jobs_without_queue_name", True),
        (
            ["--scheduler-identity", "a", "--scheduler-identity", "b"],
            "scheduler_identities",
            ("a", "b"),
        ),
        (["--cert-dir", "/certs"], "cert_file", Path("/certs/tls.crt")),
        (
            ["--managed-namespace-selector", "{matchLabels: {kuota: enabled}}"],
            "managed_jobs_namespace_selector",
            {"matchLabels": {"kuota": "enabled"}},
        ),
        (["--max-connections", "64"], "max_connections", 64),
        (["--idle-timeout", "30"], "idle_timeout_seconds", 30.0),
        (["--tls-handshake-timeout", "2.5"], "tls_handshake_timeout_seconds", 2.5),
        ([], "max_connections", 1024),
        ([], "idle_timeout_seconds", 120.0),
        ([], "tls_handshake_timeout_seconds", 10.0),
    ],
)
def test_flags_become_settings(argv: list[str], field: str, value: Any) -> None:
    from webhook.settings import settings_from_args

    assert getattr(settings_from_args(build_parser().parse_args(argv)), field) == value


def test_the_configuration_file_supplies_job_management(tmp_path: Path) -> None:
    from webhook.settings import settings_from_args

    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nnamespace: kuota\n"
        "manageJobsWithoutQueueName: true\n"
    )
    settings = settings_from_args(build_parser().parse_args(["--config", str(config)]))
    assert settings.manage_jobs_without_queue_name is True and settings.kuota_namespace == "kuota"
    overridden = settings_from_args(
        build_parser().parse_args(["--config", str(config), "--no-manage-jobs-without-queue-name"])
    )
    assert overridden.manage_jobs_without_queue_name is False


@pytest.mark.parametrize(
    "argv", [["--max-connections", "0"], ["--idle-timeout", "0"], ["--tls-handshake-timeout", "-1"]]
)
def test_a_bound_that_bounds_nothing_is_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(argv)
    assert stopped.value.code == 2
    assert argv[0] in capsys.readouterr().err
