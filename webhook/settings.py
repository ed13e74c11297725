"""The webhook's settings: every flag of ``kuota-webhook``, in one frozen value.

Flags win over the Configuration file (``--config``, a Kueue
``config.kueue.x-k8s.io`` file, checked at start with the rules of ``kuota
validate``: :mod:`scheduler.api.config_file`): the file supplies
``manageJobsWithoutQueueName``, ``managedJobsNamespaceSelector``,
``namespace``, the enabled ``integrations.frameworks`` and
``externalFrameworks``, the ``featureGates`` the rules read, and the
server's ``webhook.host``, ``webhook.port``, ``webhook.certDir`` (default,
as Kueue's, ``/tmp/k8s-webhook-server/serving-certs``) and ``tls``, so a
Kueue configuration drives kuota's webhook unchanged; a flag given on the
command line overrides the file's value.

:func:`build_parser` is the single description of the command line; its
``--help`` documents every flag.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from scheduler.api.config import DEFAULT_NAMESPACE, Configuration
from scheduler.api.config_file import LoadedConfiguration, read_configuration
from scheduler.api.operational import KUEUE_WEBHOOK_CERT_DIR, webhook_server
from scheduler.jobs import Integration
from scheduler.jobs.managed_namespaces import ManagedNamespaces, raw_selector
from scheduler.version import kuota_version
from webhook import secure_metrics

DEFAULT_SCHEDULER_IDENTITY = "system:serviceaccount:kueue-system:kuota-scheduler"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9443
MiB = 1024 * 1024
# Connection bounds (the reasons are in webhook/connections.py):
# 1,024 open TLS connections cost about 66 MiB (about 64 KiB each with 32 KiB read
# buffers, webhook/memory.py; measured), far below the chart's 512 Mi, and leave room
# for an API server's pool (client-go keeps at most 25 idle connections per host) and
# its bursts (API Priority and Fairness runs up to 600 requests at once by default).
DEFAULT_MAX_CONNECTIONS = 1024
# Longer than the 90 s after which kube-apiserver's HTTP client drops an idle
# connection itself, so the webhook never closes one that the API server is about
# to reuse (a POST on a connection closed under it fails the admission request).
DEFAULT_IDLE_TIMEOUT_SECONDS = 120.0
# Go's own TLS client gives up after 10 s (net/http DefaultTransport).
DEFAULT_TLS_HANDSHAKE_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class WebhookSettings:
    """Everything the process and its decisions depend on."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    cert_file: Path | None = None
    key_file: Path | None = None
    tls_min_version: str | None = None
    """``tls.minVersion`` (``VersionTLS12``, ``VersionTLS13``); None: OpenSSL's default."""
    cipher_suites: tuple[str, ...] = ()
    """``tls.cipherSuites`` (Go's names); empty: OpenSSL's default."""
    cert_wait_seconds: float = 60.0
    cert_reload_seconds: float = 5.0
    probe_port: int | None = None
    metrics_address: str = ""
    """Where /metrics is served (HOST:PORT; empty: nowhere); see webhook.secure_metrics."""
    metrics_secure: bool = True
    metrics_cert_dir: Path | None = None
    manage_jobs_without_queue_name: bool = False
    managed_jobs_namespace_selector: Mapping[str, Any] | None = None
    """Raw label selector (``matchLabels``/``matchExpressions``); None is Kueue's default (every
    namespace); kube-system and kuota's namespace are never managed either way."""
    kuota_namespace: str = DEFAULT_NAMESPACE
    frameworks: tuple[str, ...] = ("batch/job",)
    multikueue_managed_by: bool = False
    """A MultiKueue manager: queued Jobs of a ClusterQueue with a MultiKueue check get
    ``spec.managedBy: kueue.x-k8s.io/multikueue`` (two more lookups per queued Job)."""
    scheduler_identities: tuple[str, ...] = (DEFAULT_SCHEDULER_IDENTITY,)
    partial_admission: bool = True
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    """The Configuration's ``featureGates``: what the validation rules read (absent: kuota's
    defaults)."""
    external_frameworks: tuple[tuple[str, str], ...] = ()
    """``integrations.externalFrameworks`` as (apiVersion, kind): owners whose jobs are theirs."""
    config_warnings: tuple[str, ...] = ()
    """The Configuration's settings kuota does not act on (logged at start)."""
    kubeconfig: Path | None = None
    cluster_lookups: bool = True
    lookup_timeout_seconds: float = 2.0
    max_body_bytes: int = 3 * MiB
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    idle_timeout_seconds: float = DEFAULT_IDLE_TIMEOUT_SECONDS
    tls_handshake_timeout_seconds: float = DEFAULT_TLS_HANDSHAKE_TIMEOUT_SECONDS
    shutdown_grace_seconds: float = 10.0
    log_level: str = "info"
    extra: Mapping[str, Any] = field(default_factory=dict)

    def enabled(self, integration: Integration) -> bool:
        """The integration's framework is in ``integrations.frameworks``."""
        return integration.framework in self.frameworks

    @property
    def managed_namespaces(self) -> ManagedNamespaces:
        """The settings of the managed-namespace rule (:mod:`scheduler.jobs.managed_namespaces`)."""
        return ManagedNamespaces(
            kuota_namespace=self.kuota_namespace, selector=self.managed_jobs_namespace_selector
        )


def external_framework(name: str) -> tuple[str, str]:
    """``Kind.version.group`` (CFG-4's form) as (apiVersion, kind): pure."""
    kind, version, group = name.split(".", 2)
    return f"{group}/{version}", kind


def from_configuration(
    config: Configuration, base: WebhookSettings | None = None
) -> WebhookSettings:
    """Pure: settings taking the job-management and server fields from a Kueue Configuration."""
    server = webhook_server(config)
    cert_dir = Path(server.cert_dir or KUEUE_WEBHOOK_CERT_DIR)
    return replace(
        base or WebhookSettings(),
        manage_jobs_without_queue_name=config.manage_jobs_without_queue_name,
        managed_jobs_namespace_selector=raw_selector(config),
        kuota_namespace=config.namespace,
        frameworks=tuple(config.integrations.frameworks),
        external_frameworks=tuple(
            external_framework(name) for name in config.integrations.external_frameworks
        ),
        partial_admission=bool(config.feature_gates.get("PartialAdmission", True)),
        feature_gates=dict(config.feature_gates),
        host=server.host or DEFAULT_HOST,
        port=server.port or DEFAULT_PORT,
        cert_file=cert_dir / "tls.crt",
        key_file=cert_dir / "tls.key",
        tls_min_version=server.tls_min_version,
        cipher_suites=server.cipher_suites,
    )


def from_loaded(
    loaded: LoadedConfiguration, base: WebhookSettings | None = None
) -> WebhookSettings:
    """Pure: :func:`from_configuration`, with the file's warnings kept for the start-up log."""
    return replace(from_configuration(loaded.config, base), config_warnings=loaded.warnings)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kuota-webhook",
        description=(
            "kuota's admission and CRD-conversion webhook server (HTTPS). It suspends queued "
            "batch/v1 Jobs on create, defaults and validates kueue.x-k8s.io resources with the "
            "same "
            "messages as `kuota validate`, and converts between their API versions."
        ),
        epilog=(
            "Endpoints: /mutate-batch-v1-job, /validate-batch-v1-job, "
            "/mutate-kueue-x-k8s-io-v1beta2-<kind>, "
            "/validate-kueue-x-k8s-io-v1beta2-<kind>, /convert, /healthz, /readyz; /metrics on "
            "--metrics-bind-address. "
            "SIGTERM stops accepting connections and lets requests in flight finish."
        ),
    )
    parser.add_argument("--version", action="version", version=f"kuota-webhook {kuota_version()}")
    tls = parser.add_argument_group("serving")
    tls.add_argument(
        "--host",
        default=None,
        help=f"address to listen on (default: webhook.host, else {DEFAULT_HOST})",
    )
    tls.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"HTTPS port (default: webhook.port, else {DEFAULT_PORT}; 0 picks a free port)",
    )
    tls.add_argument(
        "--cert-file", type=Path, help="PEM serving certificate (chain) signed by the caBundle's CA"
    )
    tls.add_argument("--key-file", type=Path, help="PEM private key of --cert-file")
    tls.add_argument(
        "--cert-dir",
        type=Path,
        help="directory holding tls.crt and tls.key (a mounted Secret); "
        "shorthand for the two flags above (default with --config: webhook.certDir, else "
        f"{KUEUE_WEBHOOK_CERT_DIR}, as Kueue)",
    )
    tls.add_argument(
        "--cert-wait",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait at start for the certificate files to appear (default: 60)",
    )
    tls.add_argument(
        "--cert-reload-interval",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="how often to check the certificate files for changes; a change is loaded for new "
        "connections without dropping open ones (default: 5)",
    )
    tls.add_argument(
        "--probe-port",
        type=int,
        default=None,
        help="also serve /healthz and /readyz over plain HTTP on this port (off by default)",
    )
    tls.add_argument(
        "--max-body-bytes",
        type=int,
        default=3 * MiB,
        help="larger request bodies are refused with HTTP 400 (default: 3 MiB)",
    )
    tls.add_argument(
        "--max-connections",
        type=_positive_int,
        default=DEFAULT_MAX_CONNECTIONS,
        metavar="N",
        help="open HTTPS connections at most, TLS handshakes included (each costs about 64 KiB); "
        "beyond it the connection quiet the longest is closed, a request in progress never "
        f"(default: {DEFAULT_MAX_CONNECTIONS})",
    )
    tls.add_argument(
        "--idle-timeout",
        type=_positive_float,
        default=DEFAULT_IDLE_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help="close a connection that has carried no request for this long (default: "
        f"{DEFAULT_IDLE_TIMEOUT_SECONDS:g}, above kube-apiserver's own 90 s)",
    )
    tls.add_argument(
        "--tls-handshake-timeout",
        type=_positive_float,
        default=DEFAULT_TLS_HANDSHAKE_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help="close a connection whose TLS handshake is not done by then "
        f"(default: {DEFAULT_TLS_HANDSHAKE_TIMEOUT_SECONDS:g})",
    )
    tls.add_argument(
        "--shutdown-grace",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time given to requests in flight after SIGTERM (default: 10)",
    )
    secure_metrics.add_arguments(parser)
    jobs = parser.add_argument_group("job management")
    jobs.add_argument(
        "--config",
        type=Path,
        help="a Kueue Configuration file (config.kueue.x-k8s.io/v1beta2); supplies the defaults of "
        "the flags in this group",
    )
    jobs.add_argument(
        "--manage-jobs-without-queue-name",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="suspend Jobs without a queue name in managed namespaces too (Configuration field "
        "manageJobsWithoutQueueName; default: off)",
    )
    jobs.add_argument(
        "--managed-namespace-selector",
        metavar="YAML",
        help="label selector of the managed namespaces, as YAML/JSON (Configuration field "
        "managedJobsNamespaceSelector); a Job elsewhere, queued or not, is not kuota's at all. "
        "kube-system and kuota's namespace are never managed (default: every other namespace)",
    )
    jobs.add_argument(
        "--kuota-namespace",
        default=None,
        help=f"kuota's own namespace, never managed "
        f"(default: {DEFAULT_NAMESPACE} or the Configuration's)",
    )
    jobs.add_argument(
        "--scheduler-identity",
        action="append",
        default=None,
        metavar="USERNAME",
        help="the only identity allowed to unsuspend a queued Job; repeat for several "
        f"(default: {DEFAULT_SCHEDULER_IDENTITY})",
    )
    cluster = parser.add_argument_group("cluster lookups (default LocalQueue, owners of a Job)")
    cluster.add_argument(
        "--kubeconfig",
        type=Path,
        help="kubeconfig for lookups (default: $KUBECONFIG, else the in-cluster service account)",
    )
    cluster.add_argument(
        "--no-cluster-lookups",
        action="store_true",
        help="never call the API server: no default LocalQueue, owners unknown (tests, benchmarks)",
    )
    cluster.add_argument(
        "--multikueue-managed-by",
        action="store_true",
        help="on a MultiKueue manager: give a queued Job whose ClusterQueue has an "
        "AdmissionCheck of kueue.x-k8s.io/multikueue spec.managedBy: kueue.x-k8s.io/multikueue, "
        "so the Job runs on a worker, never here (looks up its LocalQueue and ClusterQueue)",
    )
    cluster.add_argument(
        "--lookup-timeout",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="time limit of one lookup (default: 2)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("debug", "info", "warning", "error"),
        help="log verbosity; logs are JSON lines on stderr (default: info)",
    )
    return parser


def settings_from_args(args: argparse.Namespace) -> WebhookSettings:
    """Settings from parsed flags (reads ``--config`` when given).

    Raises :class:`~scheduler.api.config_file.ConfigurationError` for a file
    that does not pass the rules of ``kuota validate``.
    """
    base = WebhookSettings()
    if args.config is not None:
        base = from_loaded(read_configuration(args.config), base)
    cert_file, key_file = args.cert_file, args.key_file
    if args.cert_dir is not None:
        cert_file = cert_file or args.cert_dir / "tls.crt"
        key_file = key_file or args.cert_dir / "tls.key"
    if cert_file is None and key_file is None:
        cert_file, key_file = base.cert_file, base.key_file
    selector = base.managed_jobs_namespace_selector
    if args.managed_namespace_selector is not None:
        loaded = yaml.safe_load(args.managed_namespace_selector)
        if not isinstance(loaded, dict):
            raise SystemExit(
                "--managed-namespace-selector must be a YAML/JSON label selector object"
            )
        selector = loaded
    return replace(
        base,
        host=args.host if args.host is not None else base.host,
        port=args.port if args.port is not None else base.port,
        cert_file=cert_file,
        key_file=key_file,
        cert_wait_seconds=args.cert_wait,
        cert_reload_seconds=args.cert_reload_interval,
        probe_port=args.probe_port,
        metrics_address=args.metrics_bind_address,
        metrics_secure=args.metrics_secure,
        metrics_cert_dir=args.metrics_cert_dir,
        max_body_bytes=args.max_body_bytes,
        max_connections=args.max_connections,
        idle_timeout_seconds=args.idle_timeout,
        tls_handshake_timeout_seconds=args.tls_handshake_timeout,
        shutdown_grace_seconds=args.shutdown_grace,
        manage_jobs_without_queue_name=(
            base.manage_jobs_without_queue_name
            if args.manage_jobs_without_queue_name is None
            else args.manage_jobs_without_queue_name
        ),
        managed_jobs_namespace_selector=selector,
        kuota_namespace=args.kuota_namespace or base.kuota_namespace,
        scheduler_identities=tuple(args.scheduler_identity or base.scheduler_identities),
        kubeconfig=args.kubeconfig,
        cluster_lookups=not args.no_cluster_lookups,
        lookup_timeout_seconds=args.lookup_timeout,
        multikueue_managed_by=args.multikueue_managed_by,
        log_level=args.log_level,
    )
