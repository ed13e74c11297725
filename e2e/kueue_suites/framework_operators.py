"""The job frameworks' controllers for the singlecluster/extended suite.

The suite's BeforeSuite waits, for each framework its label filter selects, for
that operator's Deployment to be Available with no container restarts
(Kueue's ``test/util/e2e.go``: ``WaitForLeaderWorkerSetAvailability`` and
the others, by the namespace and name Kueue's CI installs them under).

Here each operator is the real controller, built from its Go module at the
version kuota's own framework tests use, run exactly as those tests run it
(:mod:`e2e.cluster.frameworks`: a process beside the control plane, in the
cluster's network namespace, its CRDs installed, its webhooks registered by URL
on 127.0.0.1).  The Deployment the
suite waits for is a stand-in: a pause pod on the real node under the
operator's name, because the operator itself does not run in a pod here.
The suite never looks inside that pod; it looks at what the operator does to
the jobs, which the real controller does.  JobSet, by contrast, runs from its
release manifests in a pod (:mod:`.jobset_operator`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster.controlplane import ClusterInfo
from e2e.cluster.frameworks import FRAMEWORKS, FrameworkController, install_framework
from e2e.cluster.node_tools import PAUSE_REFERENCE
from e2e.cluster.realnode import network_namespace

from .environment import kubectl

DEPLOYMENTS: dict[str, tuple[str, str]] = {
    "lws": ("lws-system", "lws-controller-manager"),
    "kuberay": ("default", "kuberay-operator"),
    "mpi-operator": ("mpi-operator", "mpi-operator"),
    "training-operator": ("kubeflow", "training-operator"),
    "appwrapper": ("appwrapper-system", "appwrapper-controller-manager"),
    "trainer": ("kubeflow-system", "kubeflow-trainer-controller-manager"),
}
"""Framework (``e2e.cluster.frameworks`` name) -> the Deployment Kueue's util waits for."""


def stand_in(
    namespace: str, name: str, selector: dict[str, str], toleration: dict[str, str]
) -> list[dict[str, Any]]:
    """The namespace and a one-replica pause Deployment named as the operator's (pure)."""
    labels = {"app.kubernetes.io/name": name, "kuota.test/stands-in-for": "operator"}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "nodeSelector": dict(selector),
                        "tolerations": [dict(toleration)],
                        "containers": [
                            {
                                "name": "stand-in",
                                "image": PAUSE_REFERENCE,
                                "imagePullPolicy": "IfNotPresent",
                            }
                        ],
                    },
                },
            },
        },
    ]


@contextmanager
def running(
    info: ClusterInfo,
    workdir: Path,
    names: tuple[str, ...],
    *,
    selector: dict[str, str],
    toleration: dict[str, str],
) -> Iterator[list[FrameworkController]]:
    """Each named operator's controller running, its stand-in Available; stopped on exit."""
    with ExitStack() as stack:
        controllers = []
        for name in names:
            controller = install_framework(
                FRAMEWORKS[name], info, workdir, timeout=300, netns=network_namespace(workdir)
            )
            stack.callback(controller.uninstall)
            controllers.append(controller)
            namespace, deployment = DEPLOYMENTS[name]
            kubectl(
                info,
                ["apply", "--server-side", "-f", "-"],
                yaml.safe_dump_all(stand_in(namespace, deployment, selector, toleration)),
            )
        for name in names:
            namespace, deployment = DEPLOYMENTS[name]
            kubectl(
                info,
                [
                    "-n",
                    namespace,
                    "rollout",
                    "status",
                    f"deployment/{deployment}",
                    "--timeout=300s",
                ],
            )
        yield controllers
