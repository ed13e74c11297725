"""The local control plane's PKI: one CA, the API server's serving certificate,
an admin client certificate and the service-account signing key; and, apart,
the front-proxy CA with the client certificate the API server's aggregator
presents to extension API servers (kuota's visibility API), which believe the
caller named in its request headers only on that certificate.

Everything is generated per cluster into ``<workdir>/pki`` so two clusters
never share trust, and nothing secret outlives ``down``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from certs.generate import KeyPair, issue, new_ca, new_rsa_signing_key, write_private

API_SERVER_DNS = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
FIRST_SERVICE_IP = "10.0.0.1"  # bookkeeping only: nothing ever dials it
FRONT_PROXY_CLIENT = "front-proxy-client"
"""The common name of the aggregator's client certificate (``--requestheader-allowed-names``)."""


@dataclass(frozen=True)
class ClusterPki:
    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @property
    def apiserver_cert(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def apiserver_key(self) -> Path:
        return self.directory / "apiserver.key"

    @property
    def admin_cert(self) -> Path:
        return self.directory / "admin.crt"

    @property
    def admin_key(self) -> Path:
        return self.directory / "admin.key"

    @property
    def sa_key(self) -> Path:
        return self.directory / "sa.key"

    @property
    def sa_pub(self) -> Path:
        return self.directory / "sa.pub"

    @property
    def front_proxy_ca_cert(self) -> Path:
        return self.directory / "front-proxy-ca.crt"

    @property
    def front_proxy_client_cert(self) -> Path:
        return self.directory / "front-proxy-client.crt"

    @property
    def front_proxy_client_key(self) -> Path:
        return self.directory / "front-proxy-client.key"

    def ca(self) -> KeyPair:
        return KeyPair.load(self.ca_cert, self.ca_key)


def generate(directory: Path, *, cluster_name: str) -> ClusterPki:
    """Write a complete PKI for one cluster into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = ClusterPki(directory)
    ca = new_ca(f"{cluster_name}-ca")
    ca.write(pki.ca_cert, pki.ca_key)
    issue(
        ca,
        common_name="kube-apiserver",
        dns_names=API_SERVER_DNS,
        ip_addresses=("127.0.0.1", FIRST_SERVICE_IP),
        server=True,
    ).write(pki.apiserver_cert, pki.apiserver_key)
    # Group system:masters: full access without RBAC, for the harness and
    # the control-plane components that run with the admin kubeconfig.
    issue(ca, common_name="kuota-admin", organizations=("system:masters",), client=True).write(
        pki.admin_cert, pki.admin_key
    )
    # A CA of its own: a client certificate of the cluster CA must never pass for the proxy.
    front_proxy_ca = new_ca(f"{cluster_name}-front-proxy-ca")
    pki.front_proxy_ca_cert.write_bytes(front_proxy_ca.cert_pem)
    issue(front_proxy_ca, common_name=FRONT_PROXY_CLIENT, client=True).write(
        pki.front_proxy_client_cert, pki.front_proxy_client_key
    )
    private, public = new_rsa_signing_key()
    write_private(pki.sa_key, private)
    pki.sa_pub.write_bytes(public)
    return pki
