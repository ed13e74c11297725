"""Admin kubeconfig for a local cluster, with the credentials embedded.

Embedding (``*-data``) instead of file paths keeps the kubeconfig usable when
it is copied elsewhere, e.g. into a Secret for a multi-cluster test.
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from .pki import ClusterPki


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def render(*, cluster_name: str, server: str, pki: ClusterPki) -> str:
    """Pure apart from reading the PEM files: the kubeconfig text."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster_name,
                "cluster": {"server": server, "certificate-authority-data": _b64(pki.ca_cert)},
            }
        ],
        "users": [
            {
                "name": f"{cluster_name}-admin",
                "user": {
                    "client-certificate-data": _b64(pki.admin_cert),
                    "client-key-data": _b64(pki.admin_key),
                },
            }
        ],
        "contexts": [
            {
                "name": cluster_name,
                "context": {
                    "cluster": cluster_name,
                    "user": f"{cluster_name}-admin",
                    "namespace": "default",
                },
            }
        ],
        "current-context": cluster_name,
    }
    return yaml.safe_dump(config, sort_keys=False)
