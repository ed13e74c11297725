"""The cluster Kueue's suites expect, built locally, with kuota's Kueue-compatible install.

What the suites assume (Kueue v0.19.2: ``test/util/e2e.go``, each suite's
``suite_test.go``, ``hack/testing/kind-cluster.yaml``, ``hack/testing/e2e-common.sh``,
``test/e2e/config/baseline``) and how this harness provides it:

- a kind cluster whose workers are labelled ``instance-type: on-demand``
  (``kind-worker``) and ``instance-type: spot`` (``kind-worker2``); the TAS
  suite's eight workers labelled by node group, block and rack
  (``kind-cluster-tas.yaml``).  Here they are kwok nodes with those names and
  labels (a kind node shows the machine's capacity: 8 CPUs and 32 GiB here);
- Kueue installed in ``KUEUE_NAMESPACE`` (``kueue-system``): an Available
  Deployment ``kueue-controller-manager`` (one replica in the baseline
  config) with no container restarts, whose Ready pods' IPs are exactly the
  ready endpoints of the Service ``kueue-webhook-service``, a webhook that
  answers a dry-run ResourceFlavor create, the leader Lease
  ``c1f6bfd2.kueue.x-k8s.io`` renewed after the suite starts, and the
  ConfigMap ``kueue-manager-config`` (key ``controller_manager_config.yaml``)
  that the sequential suites rewrite before restarting the Deployment.  Here
  it is kuota's chart with ``kueueCompatible: true`` (``values.yaml``), its
  image running on the cluster's real node (containerd and kubelet in a private
  network namespace, :mod:`e2e.cluster.realnode`), the API server calling the
  webhook through its Service as it would calling Kueue's;
- pods that do what their agnhost arguments ask: kwok's stages of
  :mod:`.kwok_stages` on the kwok workers, and ``kubectl exec`` into them
  answered as agnhost and a curl pod would (:mod:`.pod_exec`).  The real node is tainted, so the
  suites' pods never land on it;
- a kubeconfig: the test binaries build their client with controller-runtime's
  ``GetConfigWithContext`` (``KUBECONFIG``), here the cluster's admin
  kubeconfig, whose server is the 127.0.0.1 forwarder into the namespace.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

from e2e.cluster.controlplane import ClusterInfo, sweep_abandoned
from e2e.cluster.nodes import NodeSpec
from e2e.cluster.realnode import start_cluster, stop_cluster
from tests.chart.helm import CHART, run_helm

from . import kwok_stages, pod_exec

NAMESPACE = "kueue-system"
RELEASE = "kuota"
VALUES = Path(__file__).with_name("values.yaml")
WORKDIR_PREFIX = "kuota-kueue-e2e-"
REAL_NODE_TAINT = {"key": "kuota.test/real-node", "value": "true", "effect": "NoSchedule"}
REAL_NODE_SELECTOR = {"kuota.test/real-node": "true"}
REAL_NODE_TOLERATION = {"key": "kuota.test/real-node", "operator": "Exists", "effect": "NoSchedule"}

# A kind node reports the machine it runs on; Kueue's CI machines have several cores.
WORKER_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110"}

AGNHOST_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.66.0"
"""hack/testing/agnhost/Dockerfile's image without its digest, as e2e-common.sh exports it."""
AGNHOST_IMAGE_OLD = "registry.k8s.io/e2e-test-images/agnhost:2.52"
KUBERAY_RAY_IMAGE = "us-central1-docker.pkg.dev/k8s-staging-images/kueue/ray-project-mini:0.0.4"
"""The Ray image of Kueue's presubmit runs (``determine_kuberay_ray_image``: ray-project-mini at
its Makefile's RAYMINI_VERSION); kwok runs no container, so only the name matters."""
REDIS_IMAGE = "redis:8.8-alpine"
"""hack/testing/redis/Dockerfile's image without its digest, as e2e-common.sh exports it."""


def kuota_image(directory: Path) -> Path:
    """kuota's image (``make image``: a cache hit if built) copied into ``directory``.

    The image cache keeps one archive per version and removes the others when a worktree
    with other sources builds its own, which can happen while the suites run: the copy
    is this run's own (rebuilt if the archive went away before it was copied).
    """
    from e2e.image.build import build as build_image

    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "kuota.oci.tar"
    for _attempt in range(3):
        source = build_image()
        try:
            shutil.copyfile(source, target)
        except FileNotFoundError:
            continue
        return target
    raise RuntimeError(f"kuota's image archive kept disappearing from {source.parent}")


def kind_workers() -> tuple[NodeSpec, ...]:
    """``hack/testing/kind-cluster.yaml``'s two workers (pure)."""
    return (
        NodeSpec("kind-worker", {"instance-type": "on-demand"}, (), WORKER_CAPACITY),
        NodeSpec("kind-worker2", {"instance-type": "spot"}, (), WORKER_CAPACITY),
    )


def tas_workers() -> tuple[NodeSpec, ...]:
    """``hack/testing/kind-cluster-tas.yaml``'s eight workers (pure)."""
    nodes = []
    for index, (block, rack) in enumerate(
        (block, rack) for block in ("b1", "b2") for rack in ("r1", "r2") for _ in range(2)
    ):
        name = "kind-worker" if index == 0 else f"kind-worker{index + 1}"
        labels = {
            "cloud.provider.com/node-group": "tas-group",
            "cloud.provider.com/topology-block": block,
            "cloud.provider.com/topology-rack": rack,
        }
        nodes.append(NodeSpec(name, labels, (), WORKER_CAPACITY))
    return tuple(nodes)


def workers_for(suite: str) -> tuple[NodeSpec, ...]:
    return tas_workers() if suite.startswith("tas/") else kind_workers()


def suite_env(kubeconfig: Path, home: Path) -> dict[str, str]:
    """The environment of a suite binary: the cluster, Kueue's namespace and images (pure)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "KUBECONFIG": str(kubeconfig),
        "KUEUE_NAMESPACE": NAMESPACE,
        "E2E_TEST_AGNHOST_IMAGE": AGNHOST_IMAGE,
        "E2E_TEST_AGNHOST_IMAGE_OLD": AGNHOST_IMAGE_OLD,
        "KUBERAY_RAY_IMAGE": KUBERAY_RAY_IMAGE,
        "E2E_TEST_REDIS_IMAGE": REDIS_IMAGE,
        "KIND_CLUSTER_NAME": "kind",
        "E2E_MODE": "ci",
        "ARTIFACTS": str(home / "artifacts"),
    }


@dataclass(frozen=True)
class Environment:
    cluster: ClusterInfo
    workdir: Path
    install_seconds: float


def install(info: ClusterInfo, *, extra_values: tuple[Path, ...] = ()) -> None:
    """``helm install`` of the chart's Kueue-compatible install, as an admin would."""
    files = [arg for path in (VALUES, *extra_values) for arg in ("-f", str(path))]
    run_helm(
        "install",
        RELEASE,
        str(CHART),
        "-n",
        NAMESPACE,
        "--create-namespace",
        *files,
        "--wait",
        "--timeout",
        "8m",
        kubeconfig=info.kubeconfig,
        timeout=600,
    )


def kubectl(info: ClusterInfo, argv: list[str], stdin: str | None = None) -> None:
    """``kubectl ARGV`` against the cluster as its admin; raises with its output on failure."""
    from e2e.cluster.tools import ToolPaths

    binary = str(ToolPaths.resolve(build_if_missing=False).binary("kubectl"))
    done = subprocess.run(
        [binary, "--kubeconfig", str(info.kubeconfig), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=360,
    )
    if done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(argv)}: {done.stdout}{done.stderr}")


def install_jobset(info: ClusterInfo) -> None:
    """JobSet's release install (:mod:`.jobset_operator`), Available before kuota comes."""
    from . import jobset_operator

    objects = jobset_operator.documents(REAL_NODE_SELECTOR, REAL_NODE_TOLERATION)
    kubectl(info, ["apply", "--server-side", "-f", "-"], yaml.safe_dump_all(objects))
    kubectl(
        info,
        [
            "-n",
            jobset_operator.NAMESPACE,
            "rollout",
            "status",
            f"deployment/{jobset_operator.DEPLOYMENT}",
            "--timeout=300s",
        ],
    )


@contextmanager
def running(
    suite: str,
    *,
    images: tuple[Path, ...],
    keep: bool = False,
    operators: tuple[str, ...] = (),
) -> Iterator[Environment]:
    """A fresh cluster shaped for ``suite`` with kuota installed; torn down afterwards.

    ``operators``: what else the suite's BeforeSuite waits for, installed first: ``jobset``
    (its release install) and the framework controllers of :mod:`.framework_operators`.
    """
    from . import framework_operators

    sweep_abandoned(Path(tempfile.gettempdir()), WORKDIR_PREFIX)
    workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
    if "jobset" in operators:
        from . import jobset_operator

        images = (*images, jobset_operator.build()[0])
    info = start_cluster(
        f"kueue-{uuid.uuid4().hex[:6]}",
        workdir,
        images=images,
        nodes=workers_for(suite),
        kwok_stages=functools.partial(kwok_stages.render, extra=pod_exec.cluster_execs(workdir)),
        node_taints=(REAL_NODE_TAINT,),
    )
    try:
        started = time.monotonic()
        if "jobset" in operators:
            install_jobset(info)
        with framework_operators.running(
            info,
            workdir,
            tuple(name for name in operators if name in framework_operators.DEPLOYMENTS),
            selector=REAL_NODE_SELECTOR,
            toleration=REAL_NODE_TOLERATION,
        ):
            install(info)
            yield Environment(info, workdir, time.monotonic() - started)
    finally:
        stop_cluster(workdir)
        if keep:
            print(f"[kueue-e2e] kept {workdir} (logs in {workdir / 'logs'})", flush=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
