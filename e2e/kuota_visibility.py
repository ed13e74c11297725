"""kuota's visibility API registered with the local cluster's aggregator.

Each scheduler replica serves the API on its own loopback port
(``--visibility-bind-address 127.0.0.1:<port>``) with one certificate for
``localhost``, ``127.0.0.1`` and ``kuota-visibility.kueue-system.svc`` (the
name the aggregator verifies).  :func:`register` points the APIServices
(:func:`scheduler.visibility.registration.api_services`, what the chart
renders) at one replica through a Service of type ExternalName naming
``localhost``: without aggregator routing (never enabled here), the API
server dials an ExternalName Service by that name at the APIService's port,
so every byte stays on 127.0.0.1 (docs/testing.md#the-local-cluster).

Register only while that replica runs, and unregister before it stops: an
APIService that does not answer makes discovery incomplete for every
client, and the namespace controller then waits before deleting namespaces.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from certs import files as cert_files
from e2e.kuota_install import KUOTA_NAMESPACE, apply_objects, kubectl, render_chart
from scheduler.visibility.registration import api_service_name, api_services
from scheduler.visibility.wire import VERSIONS

SERVICE = "kuota-visibility"
"""The chart's Service name for release ``kuota``."""
CERT_DIR = "kuota-visibility-certs"


def visibility_certs(workdir: Path) -> Path:
    """The replicas' certificate directory (made once per cluster working directory)."""
    directory = workdir / CERT_DIR
    if not (directory / cert_files.TLS_CERT).is_file():
        certificates = cert_files.make(
            dns_names=["localhost", f"{SERVICE}.{KUOTA_NAMESPACE}.svc"],
            ip_addresses=["127.0.0.1"],
            common_name="kuota-visibility",
        )
        cert_files.write(directory, certificates)
    return directory


def register(kubectl_binary: Path, kubeconfig: Path, port: int, cert_dir: Path) -> None:
    """Point the visibility APIServices at ``127.0.0.1:port``; wait until both are Available."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": KUOTA_NAMESPACE},
        "spec": {
            "type": "ExternalName",
            "externalName": "localhost",
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        },
    }
    ca = (cert_dir / cert_files.CA_CERT).read_bytes()
    registrations = api_services(
        service=SERVICE, namespace=KUOTA_NAMESPACE, port=port, ca_bundle_pem=ca
    )
    apply_objects(kubectl_binary, kubeconfig, [service, *registrations])
    wait_available(kubectl_binary, kubeconfig)


def wait_available(kubectl_binary: Path, kubeconfig: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    names = [f"apiservice/{api_service_name(version)}" for version in VERSIONS]
    while True:
        try:
            kubectl(
                kubectl_binary,
                kubeconfig,
                "wait",
                "--for=condition=Available",
                "--timeout=10s",
                *names,
            )
            return
        except RuntimeError as failed:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the visibility APIServices are not Available: {failed}"
                ) from None


def unregister(kubectl_binary: Path, kubeconfig: Path) -> None:
    """Remove the APIServices, then the Service (idempotent)."""
    kubectl(
        kubectl_binary,
        kubeconfig,
        "delete",
        "--ignore-not-found",
        *[f"apiservice/{api_service_name(version)}" for version in VERSIONS],
    )
    kubectl(
        kubectl_binary,
        kubeconfig,
        "delete",
        "--ignore-not-found",
        "-n",
        KUOTA_NAMESPACE,
        f"service/{SERVICE}",
    )


USER_ROLES = "templates/rbac-user-roles.yaml"


@contextmanager
def registered(kubectl_binary: Path, kubeconfig: Path, port: int, cert_dir: Path) -> Iterator[None]:
    """The API registered for the replica on ``port``, with the chart's user-facing roles
    (kuota-batch-user-role, ...); both removed after."""
    register(kubectl_binary, kubeconfig, port, cert_dir)
    roles = render_chart(USER_ROLES)
    apply_objects(kubectl_binary, kubeconfig, roles)
    try:
        yield
    finally:
        names = [f"clusterrole/{role['metadata']['name']}" for role in roles]
        kubectl(kubectl_binary, kubeconfig, "delete", "--ignore-not-found", *names)
        unregister(kubectl_binary, kubeconfig)
