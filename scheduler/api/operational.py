"""The Configuration's operational sections, as the processes use them (docs/configuration.md).

``leaderElection``, ``clientConnection``, ``metrics``, ``health``,
``webhook``, ``tls``, ``internalCertManagement``, ``controller``,
``visibilityServer`` and ``multiKueue`` change no scheduling decision; the parser keeps them raw
(``Configuration.operational``).  Each function here reads one of them, from
a Configuration that passed validation (so every value has its type), into
what a process needs.  ``None`` means "not in the file": the process then
uses its command-line flag's default; a flag given on the command line wins
over the file, as with Kueue's own flags.

Pure: no file, no cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from scheduler.api.config import Configuration, parse_duration

ALL_AT_ONCE_DISPATCHER: Final = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
DEFAULT_STEP_SIZE: Final = 3
"""Kueue's incremental dispatcher: workers nominated per round when ``stepSize`` is not set."""
DEFAULT_GC_INTERVAL: Final = timedelta(minutes=1)
KUEUE_WEBHOOK_CERT_DIR: Final = "/tmp/k8s-webhook-server/serving-certs"
"""Kueue's default ``webhook.certDir``."""
DEFAULT_WEBHOOK_SERVICE: Final = "kueue-webhook-service"
DEFAULT_WEBHOOK_SECRET: Final = "kueue-webhook-server-cert"


def _section(config: Configuration, name: str) -> Mapping[str, Any]:
    found = config.operational.get(name)
    return found if isinstance(found, Mapping) else {}


def _seconds(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    parsed = parse_duration(value)
    return parsed.total_seconds() if isinstance(parsed, timedelta) else None


def _string(section: Mapping[str, Any], name: str) -> str | None:
    value = section.get(name)
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class LeaderElection:
    """``leaderElection``: what the file sets (None: the flag's default)."""

    leader_elect: bool | None = None
    lease_duration: float | None = None
    renew_deadline: float | None = None
    retry_period: float | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None


def leader_election(config: Configuration) -> LeaderElection:
    section = _section(config, "leaderElection")
    elect = section.get("leaderElect")
    return LeaderElection(
        leader_elect=elect if isinstance(elect, bool) else None,
        lease_duration=_seconds(section.get("leaseDuration")),
        renew_deadline=_seconds(section.get("renewDeadline")),
        retry_period=_seconds(section.get("retryPeriod")),
        resource_name=_string(section, "resourceName"),
        resource_namespace=_string(section, "resourceNamespace"),
    )


@dataclass(frozen=True, slots=True)
class ClientConnection:
    """``clientConnection``: the API client's rate limit (token bucket)."""

    qps: float | None = None
    """Requests per second; negative: no client-side limit; None: the process's default."""
    burst: int | None = None


def client_connection(config: Configuration) -> ClientConnection:
    section = _section(config, "clientConnection")
    qps, burst = section.get("qps"), section.get("burst")
    return ClientConnection(
        qps=float(qps) if isinstance(qps, (int, float)) and not isinstance(qps, bool) else None,
        burst=burst if isinstance(burst, int) and not isinstance(burst, bool) else None,
    )


@dataclass(frozen=True, slots=True)
class Endpoints:
    """``metrics`` and ``health``: where the scheduler serves ``/metrics`` and its probes."""

    metrics_bind_address: str | None = None
    health_probe_bind_address: str | None = None
    readiness_endpoint: str = "/readyz"
    liveness_endpoint: str = "/healthz"
    cluster_queue_resources: bool = False
    """``metrics.enableClusterQueueResources``: export the per-flavor quota gauges."""


def _path(name: str | None, default: str) -> str:
    if not name:
        return default
    return name if name.startswith("/") else f"/{name}"


def endpoints(config: Configuration) -> Endpoints:
    metrics, health = _section(config, "metrics"), _section(config, "health")
    return Endpoints(
        metrics_bind_address=_string(metrics, "bindAddress"),
        health_probe_bind_address=_string(health, "healthProbeBindAddress"),
        readiness_endpoint=_path(_string(health, "readinessEndpointName"), "/readyz"),
        liveness_endpoint=_path(_string(health, "livenessEndpointName"), "/healthz"),
        cluster_queue_resources=metrics.get("enableClusterQueueResources") is True,
    )


def cache_sync_timeout(config: Configuration) -> float | None:
    """``controller.cacheSyncTimeout`` in seconds (the file holds Go nanoseconds), or None."""
    value = _section(config, "controller").get("cacheSyncTimeout")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value / 1e9
    return None


@dataclass(frozen=True, slots=True)
class WebhookServer:
    """``webhook`` and ``tls``: the webhook server's address, certificates and TLS options."""

    port: int | None = None
    host: str | None = None
    cert_dir: str | None = None
    tls_min_version: str | None = None
    """``VersionTLS12`` or ``VersionTLS13``; None: no ``tls`` section (or gate off)."""
    cipher_suites: tuple[str, ...] = ()
    """Go names (``scheduler/api/tls_options.py`` maps them to OpenSSL's)."""


def webhook_server(config: Configuration) -> WebhookServer:
    webhook, tls = _section(config, "webhook"), _section(config, "tls")
    port = webhook.get("port")
    applies = "tls" in config.operational and config.feature_gates.get("TLSOptions", True)
    suites = tls.get("cipherSuites") if applies else None
    return WebhookServer(
        port=port if isinstance(port, int) and not isinstance(port, bool) and port else None,
        host=_string(webhook, "host"),
        cert_dir=_string(webhook, "certDir"),
        tls_min_version=(_string(tls, "minVersion") or "VersionTLS12") if applies else None,
        cipher_suites=tuple(name for name in suites or () if isinstance(name, str)),
    )


@dataclass(frozen=True, slots=True)
class VisibilityServerOptions:
    """``visibilityServer`` and the gate ``VisibilityOnDemand``: whether and where the
    scheduler serves the visibility API (None: Kueue's default, ``0.0.0.0:8082``)."""

    enabled: bool = True
    bind_address: str | None = None
    bind_port: int | None = None


def visibility_server(config: Configuration) -> VisibilityServerOptions:
    section = _section(config, "visibilityServer")
    port = section.get("bindPort")
    return VisibilityServerOptions(
        enabled=config.feature_gates.get("VisibilityOnDemand", True) is not False,
        bind_address=_string(section, "bindAddress"),
        bind_port=port if isinstance(port, int) and not isinstance(port, bool) else None,
    )


@dataclass(frozen=True, slots=True)
class CertManagement:
    """``internalCertManagement``: what kuota's certificate bootstrap keeps, and where."""

    enable: bool = True
    service_name: str = DEFAULT_WEBHOOK_SERVICE
    secret_name: str = DEFAULT_WEBHOOK_SECRET
    given: bool = False
    """Whether the file has the section at all."""


def cert_management(config: Configuration) -> CertManagement:
    section = _section(config, "internalCertManagement")
    return CertManagement(
        enable=section.get("enable") is not False,
        service_name=_string(section, "webhookServiceName") or DEFAULT_WEBHOOK_SERVICE,
        secret_name=_string(section, "webhookSecretName") or DEFAULT_WEBHOOK_SECRET,
        given="internalCertManagement" in config.operational,
    )


@dataclass(frozen=True, slots=True)
class MultiKueueOptions:
    """``multiKueue``: what kuota-multikueue does (Kueue's defaults when absent)."""

    origin: str | None = None
    worker_lost_timeout: timedelta | None = None
    gc_interval: timedelta = DEFAULT_GC_INTERVAL
    """Zero: no periodic collection."""
    dispatcher: str = ALL_AT_ONCE_DISPATCHER
    step_size: int = DEFAULT_STEP_SIZE
    """Workers the incremental dispatcher nominates per round."""
    respect_config_order: bool = True
    """Nominate in the MultiKueueConfig's order (else alphabetically)."""


def multikueue(config: Configuration) -> MultiKueueOptions:
    section = _section(config, "multiKueue")
    lost = parse_duration(section["workerLostTimeout"]) if "workerLostTimeout" in section else None
    gc = parse_duration(section["gcInterval"]) if "gcInterval" in section else None
    step = DEFAULT_STEP_SIZE
    incremental = section.get("incrementalDispatcherConfig")
    gates = config.feature_gates
    configurable = gates.get("MultiKueueIncrementalDispatcherConfig", True)
    if isinstance(incremental, Mapping) and configurable:
        given = incremental.get("stepSize")
        if isinstance(given, int) and not isinstance(given, bool) and given >= 1:
            step = given
    return MultiKueueOptions(
        origin=_string(section, "origin"),
        worker_lost_timeout=lost if isinstance(lost, timedelta) else None,
        gc_interval=gc if isinstance(gc, timedelta) else DEFAULT_GC_INTERVAL,
        dispatcher=_string(section, "dispatcherName") or ALL_AT_ONCE_DISPATCHER,
        step_size=step,
        respect_config_order=gates.get("MultiKueueIncrementalDispatcherRespectConfigOrder", True),
    )


LEASE_DURATION: Final = 15.0
RENEW_DEADLINE: Final = 10.0
RETRY_PERIOD: Final = 2.0
"""Seconds: Kueue's (component-base's) leader-election defaults, and kuota's."""


@dataclass(frozen=True, slots=True)
class LeaseSettings:
    """How a process takes part in leader election: flags, else the file, else defaults."""

    leader_elect: bool
    name: str
    namespace: str
    lease_duration: float
    renew_deadline: float
    retry_period: float


def lease_settings(
    flags: LeaderElection, file: LeaderElection, *, name: str, namespace: str, suffix: str = ""
) -> LeaseSettings:
    """Each setting from the command line, else the Configuration, else the default: pure.

    ``name``/``namespace``: the process's defaults; ``suffix`` is added to a
    Lease name taken from the file (``resourceName``), so that two processes
    reading one Configuration never campaign for the same Lease.
    """

    def first(*values: float | None) -> float:
        return next(value for value in values if value is not None)

    from_file = f"{file.resource_name}{suffix}" if file.resource_name else None
    elect = flags.leader_elect if flags.leader_elect is not None else file.leader_elect
    return LeaseSettings(
        leader_elect=True if elect is None else elect,
        name=flags.resource_name or from_file or name,
        namespace=flags.resource_namespace or file.resource_namespace or namespace,
        lease_duration=first(flags.lease_duration, file.lease_duration, LEASE_DURATION),
        renew_deadline=first(flags.renew_deadline, file.renew_deadline, RENEW_DEADLINE),
        retry_period=first(flags.retry_period, file.retry_period, RETRY_PERIOD),
    )


def lease_problem(lease: LeaseSettings) -> str | None:
    """What is wrong with the Lease timings, if anything (the leader-election rules): pure."""
    if not lease.leader_elect:
        return None
    if min(lease.lease_duration, lease.renew_deadline, lease.retry_period) <= 0:
        return "the lease duration, renew deadline and retry period must be greater than 0"
    if lease.renew_deadline >= lease.lease_duration:
        return (
            "the renew deadline (--renew-deadline, leaderElection.renewDeadline) must be less "
            "than the lease duration (--lease-duration, leaderElection.leaseDuration): the gap "
            "bounds each write"
        )
    if lease.renew_deadline <= 1.2 * lease.retry_period:
        return (
            "the renew deadline (--renew-deadline, leaderElection.renewDeadline) must be more "
            "than 1.2 x the retry period (--retry-period, leaderElection.retryPeriod)"
        )
    return None
