"""``kuota-scheduler``'s start-up settings: the command line first, then the Configuration's
leaderElection, clientConnection, metrics, health and controller sections, then the defaults."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from scheduler.api.config_file import load_configuration, read_configuration
from scheduler.api.operational import lease_problem
from scheduler.kube import secure_serving
from scheduler.kube.access_review import Attributes, User
from scheduler.service import app
from scheduler.service.app import build_parser, startup

V1BETA2 = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
KUEUE_SHIPPED = Path(__file__).resolve().parents[1] / "data" / "kueue_v0.19.2"


def settings(*argv: str, **fields: Any) -> app.Startup:
    loaded = load_configuration({**V1BETA2, **fields}) if fields else None
    return startup(build_parser().parse_args(list(argv)), loaded)


def test_without_a_file_the_defaults_are_kuotas() -> None:
    found = settings()
    assert (found.lease.leader_elect, found.lease.name, found.lease.namespace) == (
        True,
        "kuota-scheduler",
        "kuota-system",
    )
    assert (found.lease.lease_duration, found.lease.renew_deadline, found.lease.retry_period) == (
        15.0,
        10.0,
        2.0,
    )
    assert (found.metrics_address, found.health_address) == ("127.0.0.1:8443", "127.0.0.1:8081")
    assert found.metrics is not None and found.metrics.secure, "HTTPS with access reviews"
    assert (found.qps, found.burst, found.cache_sync_timeout) == (None, None, None)
    assert not found.endpoints.cluster_queue_resources, "Kueue's default: not exported"


def test_the_file_sets_the_lease_the_addresses_and_the_client() -> None:
    found = settings(
        leaderElection={
            "leaderElect": False,
            "resourceName": "c1f6bfd2.kueue.x-k8s.io",
            "resourceNamespace": "kueue-system",
            "leaseDuration": "20s",
            "renewDeadline": "12s",
            "retryPeriod": "3s",
        },
        clientConnection={"qps": 50, "burst": 100},
        metrics={"bindAddress": ":8443", "enableClusterQueueResources": True},
        health={
            "healthProbeBindAddress": ":8081",
            "readinessEndpointName": "ready",
            "livenessEndpointName": "/alive",
        },
        controller={"cacheSyncTimeout": 90_000_000_000},
    )
    lease = found.lease
    assert (lease.leader_elect, lease.name, lease.namespace) == (
        False,
        "c1f6bfd2.kueue.x-k8s.io",
        "kueue-system",
    )
    assert (lease.lease_duration, lease.renew_deadline, lease.retry_period) == (20.0, 12.0, 3.0)
    assert (found.qps, found.burst) == (50.0, 100)
    assert (found.metrics_address, found.health_address) == (":8443", ":8081")
    assert (found.endpoints.readiness_endpoint, found.endpoints.liveness_endpoint) == (
        "/ready",
        "/alive",
    )
    assert found.endpoints.cluster_queue_resources and found.cache_sync_timeout == 90.0


def test_flags_override_the_file() -> None:
    fields = {
        "leaderElection": {"resourceName": "from-file", "leaseDuration": "20s"},
        "metrics": {"bindAddress": ":8443"},
        "health": {"healthProbeBindAddress": ":8081"},
    }
    found = settings(
        "--lease-name=from-flag",
        "--no-leader-elect",
        "--lease-duration=30",
        "--metrics-bind-address=127.0.0.1:9000",
        **fields,
    )
    assert (found.lease.name, found.lease.leader_elect, found.lease.lease_duration) == (
        "from-flag",
        False,
        30.0,
    )
    assert (found.metrics_address, found.health_address) == ("127.0.0.1:9000", ":8081")
    split = settings(
        "--metrics-bind-address=127.0.0.1:9000", "--health-probe-bind-address=127.0.0.1:9001"
    )
    assert (split.metrics_address, split.health_address) == ("127.0.0.1:9000", "127.0.0.1:9001")


def test_zero_serves_nothing() -> None:
    found = settings(metrics={"bindAddress": "0"}, health={"healthProbeBindAddress": "0"})
    assert (found.metrics_address, found.health_address) == (None, None)
    assert found.metrics is None and found.problem is None


def test_plain_http_metrics_only_on_loopback() -> None:
    local = settings("--no-metrics-secure")
    assert local.metrics is not None and not local.metrics.secure and local.problem is None
    exposed = settings("--no-metrics-secure", metrics={"bindAddress": ":8443"})
    assert exposed.metrics is None
    assert exposed.problem is not None and "loopback" in exposed.problem


def test_lease_timings_from_the_flags_and_the_file_are_checked_together() -> None:
    found = settings("--renew-deadline=25", leaderElection={"leaseDuration": "20s"})
    problem = lease_problem(found.lease)
    assert problem is not None and "leaderElection.leaseDuration" in problem


def test_kueues_shipped_configuration_sets_its_own_lease_and_ports() -> None:
    loaded = read_configuration(KUEUE_SHIPPED / "controller_manager_config.yaml")
    found = startup(build_parser().parse_args([]), loaded)
    assert found.lease.name == "c1f6bfd2.kueue.x-k8s.io" and found.lease.leader_elect
    assert (found.metrics_address, found.health_address) == (":8443", ":8081")
    assert (found.qps, found.burst) == (300.0, 500)
    assert lease_problem(found.lease) is None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(port: int, path: str, *, https: bool = False, token: str | None = None) -> int:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # self-signed
    request = urllib.request.Request(
        f"{'https' if https else 'http'}://127.0.0.1:{port}{path}",
        headers={"Authorization": f"Bearer {token}"} if token else {},
    )
    try:
        with urllib.request.urlopen(request, timeout=2, context=context) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as failure:
        return failure.code


class Reviewer:
    """Knows one token, allowed to get /metrics."""

    async def authenticate(self, token: str) -> User | None:
        return User("system:serviceaccount:monitoring:prometheus") if token == "good" else None

    async def authorize(self, user: User, attributes: Attributes) -> bool:
        return attributes == Attributes(verb="get", path="/metrics")


async def _codes(found: app.Startup, *asked: tuple[int, str, bool, str | None]) -> list[int]:
    served = await app._serve_endpoints(
        found, ready=lambda: True, alive=lambda: True, reviewer=Reviewer()
    )
    try:
        return await asyncio.to_thread(
            lambda: [
                _get(port, path, https=https, token=token) for port, path, https, token in asked
            ]
        )
    finally:
        for runner, watcher in served:
            await secure_serving.stop(runner, watcher)


async def test_metrics_and_probes_are_served_where_and_as_the_file_says() -> None:
    metrics_port, health_port = _free_port(), _free_port()
    found = settings(
        metrics={"bindAddress": f"127.0.0.1:{metrics_port}"},
        health={
            "healthProbeBindAddress": f"127.0.0.1:{health_port}",
            "readinessEndpointName": "ok",
        },
    )
    codes = await _codes(
        found,
        (metrics_port, "/metrics", True, "good"),
        (metrics_port, "/metrics", True, "forged"),
        (metrics_port, "/metrics", True, None),
        (metrics_port, "/healthz", True, None),
        (health_port, "/ok", False, None),
        (health_port, "/healthz", False, None),
        (health_port, "/readyz", False, None),
        (health_port, "/metrics", False, None),
    )
    assert codes == [200, 401, 401, 404, 200, 200, 404, 404]


async def test_probes_given_the_metrics_address_are_served_beside_it() -> None:
    port = _free_port()
    found = settings(
        f"--metrics-bind-address=127.0.0.1:{port}", f"--health-probe-bind-address=127.0.0.1:{port}"
    )
    codes = await _codes(
        found,
        (port, "/metrics", True, None),
        (port, "/healthz", True, None),
        (port, "/readyz", True, None),
    )
    assert codes == [401, 200, 200], "the probes are not authenticated"


async def test_informers_that_do_not_list_in_time_end_the_process(
    caplog: pytest.LogCaptureFixture,
) -> None:
    await asyncio.wait_for(app._synced_in_time(lambda: False, 0.2), timeout=5)
    assert "did not list within controller.cacheSyncTimeout" in caplog.text
    waiting = asyncio.create_task(app._synced_in_time(lambda: True, 0.2))
    await asyncio.sleep(0.4)
    assert not waiting.done(), "listed in time: it never ends by itself"
    waiting.cancel()


def test_an_invalid_configuration_is_one_log_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "resources:\n  quotaCheckStrategy: Bogus\n"
    )
    assert app.main(["--config", str(config)]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line]
    assert len(lines) == 1 and lines[0]["level"] == "error"
    assert "resources.quotaCheckStrategy: unsupported value" in lines[0]["msg"]
