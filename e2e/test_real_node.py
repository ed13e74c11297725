"""kuota's image, installed by its chart, running on a real node (docs/testing.md#the-real-node).

Everything else in e2e runs kuota as host processes next to kwok's fake
nodes.  Here the module starts its own cluster with one real node
(``e2e.cluster.realnode``: containerd, kubelet and kube-proxy in a private
network namespace, kuota's image from ``make image`` loaded) and installs
the chart as an admin would, changing only values a user sets anyway:

- ``nodeSelector`` of the three Deployments: the real node (the kwok nodes
  would "run" the pods without running anything);
- ``webhook.affinity``: a *preferred* anti-affinity, since one node cannot
  hold two webhook pods under the default *required* one.

Image, entry points, read-only root filesystem, non-root user, probes,
in-cluster configuration, the certificate bootstrap inside a pod, the API
server calling the webhook through its Service (it runs inside the namespace
the harness created, so a Service address is one of the project's own test
hosts), leader election between two real pods and the chart's RBAC are all
exercised for real; the release namespace enforces the restricted Pod
Security Standard.  The tests run in order and build on each other.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from cryptography import x509

from e2e.cluster.controlplane import ClusterInfo, sweep_abandoned
from e2e.cluster.node_config import NODE_NAME
from e2e.cluster.realnode import start_cluster, stop_cluster
from e2e.cluster.tools import KUBERNETES, ToolPaths
from e2e.image import recipe
from e2e.image.build import build as build_image
from tests.chart.helm import CHART, run_helm

pytestmark = pytest.mark.cluster

T = TypeVar("T")
WORKDIR_PREFIX = "kuota-e2e-node-"
RELEASE = "kuota"
NAMESPACE = "kuota-system"
SERVICE = "kuota-webhook-service"
SECRET = "kuota-webhook-server-cert"
LEASE = "kuota-scheduler"
ON_THE_NODE = {"kuota.test/real-node": "true"}
TEAM = "team-real"
USER_VALUES = {
    "scheduler.nodeSelector": ON_THE_NODE,
    "webhook.nodeSelector": ON_THE_NODE,
    "certBootstrap.nodeSelector": ON_THE_NODE,
    "webhook.affinity": {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 100,
                    "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": {
                            "matchLabels": {"app.kubernetes.io/component": "webhook"}
                        },
                    },
                }
            ]
        }
    },
}


@dataclass
class Kube:
    """kubectl against the real-node cluster (through its 127.0.0.1 forwarder)."""

    info: ClusterInfo
    binary: Path

    def run(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        done = subprocess.run(
            [str(self.binary), "--kubeconfig", str(self.info.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=180,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {done.stdout}{done.stderr}")
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))

    def apply(self, objects: list[dict[str, Any]]) -> str:
        return self.run("apply", "-f", "-", stdin=yaml.safe_dump_all(objects))


def eventually(probe: Callable[[], T], accept: Callable[[T], bool], what: str, timeout: float) -> T:
    """Call ``probe`` until ``accept`` holds; fail with the last result (or error) seen."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            value = probe()
        except AssertionError as failure:  # kubectl failed: try again
            last = failure
        else:
            if accept(value):
                return value
            last = value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last seen: {last!r}")


@pytest.fixture(scope="module")
def node_cluster() -> Iterator[ClusterInfo]:
    external = os.environ.get("KUBECONFIG")
    if external and Path(external).is_file():
        pytest.skip("runs its own local cluster with a real node; KUBECONFIG names another cluster")
    sweep_abandoned(Path(tempfile.gettempdir()), WORKDIR_PREFIX)
    image = build_image()  # a cache hit after `make image`
    workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX))
    info = start_cluster(f"e2e-{uuid.uuid4().hex[:6]}", workdir, images=[image])
    try:
        yield info
    finally:
        stop_cluster(workdir)
        if os.environ.get("KUOTA_E2E_KEEP") == "1":
            print(f"\n[kuota-e2e] kept {workdir} (logs in {workdir / 'logs'})")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def kube(node_cluster: ClusterInfo) -> Kube:
    return Kube(node_cluster, ToolPaths.resolve(build_if_missing=False).binary("kubectl"))


def _helm(info: ClusterInfo, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_helm(*args, kubeconfig=info.kubeconfig, check=check, timeout=420)


def _values() -> list[str]:
    return [
        arg
        for key, value in USER_VALUES.items()
        for arg in ("--set-json", f"{key}={json.dumps(value)}")
    ]


@pytest.fixture(scope="module")
def release(node_cluster: ClusterInfo, kube: Kube) -> Iterator[str]:
    """``helm install`` into a namespace that enforces the restricted Pod Security Standard."""
    kube.apply(
        [
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": NAMESPACE,
                    "labels": {
                        "pod-security.kubernetes.io/enforce": "restricted",
                        "pod-security.kubernetes.io/enforce-version": "latest",
                    },
                },
            }
        ]
    )
    _helm(
        node_cluster,
        "install",
        RELEASE,
        str(CHART),
        "-n",
        NAMESPACE,
        *_values(),
        "--wait",
        "--timeout",
        "6m",
    )
    yield RELEASE
    _helm(node_cluster, "uninstall", RELEASE, "-n", NAMESPACE, "--wait", check=False)


def _pods(kube: Kube, component: str) -> list[dict[str, Any]]:
    selector = f"app.kubernetes.io/instance={RELEASE},app.kubernetes.io/component={component}"
    return list(kube.json("get", "pods", "-n", NAMESPACE, "-l", selector)["items"])


def _ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions") or []
    return pod["metadata"].get("deletionTimestamp") is None and any(
        c["type"] == "Ready" and c["status"] == "True" for c in conditions
    )


# -- the node -----------------------------------------------------------------------


def test_the_real_node_runs_containerd_with_kuotas_image(kube: Kube) -> None:
    node = kube.json("get", "node", NODE_NAME)
    info = node["status"]["nodeInfo"]
    assert info["containerRuntimeVersion"].startswith("containerd://")
    assert info["kubeletVersion"] == KUBERNETES
    images = {name for image in node["status"]["images"] for name in image["names"]}
    assert recipe.reference() in images
    ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"]
    assert ready == "True"
    # The kwok nodes are still there, and still kwok's.
    fake = kube.json("get", "nodes", "-l", "type=kwok")["items"]
    assert fake and all(n["status"]["nodeInfo"]["kubeletVersion"].startswith("kwok") for n in fake)


# -- the chart on it --------------------------------------------------------------------


def test_two_webhook_and_two_scheduler_pods_run_the_image_under_the_restricted_standard(
    release: str, kube: Kube
) -> None:
    for component in ("webhook", "scheduler"):
        pods = _pods(kube, component)
        assert len(pods) == 2 and all(_ready(p) for p in pods), component
        for pod in pods:
            assert pod["spec"]["nodeName"] == NODE_NAME
            (status,) = pod["status"]["containerStatuses"]
            assert "running" in status["state"] and status["image"].endswith(
                f"kuota:{recipe.version()}"
            )
            security = pod["spec"]["containers"][0]["securityContext"]
            assert security["readOnlyRootFilesystem"] is True
            assert pod["spec"]["securityContext"]["runAsUser"] == recipe.UID
    namespace = kube.json("get", "namespace", NAMESPACE)
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert "violates PodSecurity" not in kube.run("get", "events", "-n", NAMESPACE)


def test_the_certificate_bootstrap_fills_the_secret_and_injects_its_ca(
    release: str, kube: Kube
) -> None:
    secret = eventually(
        lambda: kube.json("get", "secret", SECRET, "-n", NAMESPACE),
        lambda s: bool(s.get("data", {}).get("tls.crt")),
        "the bootstrap to issue the webhook certificate",
        120,
    )
    owners = [(o["kind"], o["name"]) for o in secret["metadata"].get("ownerReferences", [])]
    assert owners == [("Deployment", "kuota-cert-bootstrap")], "uninstall takes it along"
    serving = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"{SERVICE}.{NAMESPACE}.svc" in names.get_values_for_type(x509.DNSName)
    bundle = secret["data"]["ca.crt"]
    for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
        name = f"kuota-{kind.removesuffix('webhookconfiguration')}-webhook-configuration"
        for entry in kube.json("get", kind, name)["webhooks"]:
            assert entry["clientConfig"]["caBundle"] == bundle, entry["name"]
            assert entry["clientConfig"]["service"]["name"] == SERVICE
    crds = kube.json("get", "crd", "-l", f"app.kubernetes.io/instance={RELEASE}")["items"]
    assert crds
    for crd in crds:
        conversion = crd["spec"]["conversion"]["webhook"]["clientConfig"]
        assert conversion["caBundle"] == bundle and conversion["service"]["name"] == SERVICE


def _queues() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "real-node"},
            "spec": {"nodeLabels": ON_THE_NODE},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "real"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "real-node",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "1"},
                                    {"name": "memory", "nominalQuota": "1Gi"},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TEAM}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "main", "namespace": TEAM},
            "spec": {"clusterQueue": "real"},
        },
    ]


def _job(name: str, message: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": TEAM,
            "labels": {"kueue.x-k8s.io/queue-name": "main"},
        },
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": f"kuota:{recipe.version()}",
                            "command": ["python", "-c", f"print({message!r})"],
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ],
                }
            },
        },
    }


def _run_queued_job(kube: Kube, name: str) -> dict[str, Any]:
    """Create a queued Job; it must come back suspended, then be admitted and run."""
    message = f"{name} ran on {NODE_NAME}"
    created = json.loads(
        kube.run("create", "-o", "json", "-f", "-", stdin=json.dumps(_job(name, message)))
    )
    assert created["spec"]["suspend"] is True, "the in-cluster webhook did not suspend the Job"
    job = eventually(
        lambda: kube.json("get", "job", name, "-n", TEAM),
        lambda j: any(
            c["type"] in ("Complete", "Failed") and c["status"] == "True"
            for c in j.get("status", {}).get("conditions") or []
        ),
        f"Job {name} to be admitted and finish",
        180,
    )
    assert job["status"].get("succeeded") == 1, job["status"]
    assert job["spec"]["template"]["spec"]["nodeSelector"] == ON_THE_NODE
    # The API server reaches the kubelet (authenticated by the cluster CA) for the logs.
    assert message in kube.run("logs", f"job/{name}", "-n", TEAM)
    return dict(job)


def test_a_queued_job_is_suspended_by_the_in_cluster_webhook_and_admitted_by_the_scheduler(
    release: str, kube: Kube
) -> None:
    # The queues go through the validating webhook, via its Service, too.
    eventually(
        lambda: kube.apply(_queues()),
        lambda out: "created" in out or "unchanged" in out,
        "the queues to be accepted",
        120,
    )
    _run_queued_job(kube, "first")
    workloads = kube.json("get", "workloads", "-n", TEAM)["items"]
    (workload,) = workloads
    admitted = {c["type"]: c["status"] for c in workload["status"]["conditions"]}
    assert admitted["Admitted"] == "True"
    assert workload["status"]["admission"]["clusterQueue"] == "real"


def test_the_visibility_api_answers_through_the_aggregator(release: str, kube: Kube) -> None:
    """The chart's APIServices, through the visibility Service, to the scheduler pods'
    certificate (its names and CA from the bootstrap) and their queues."""
    secret = kube.json("get", "secret", SECRET, "-n", NAMESPACE)
    serving = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"kuota-visibility.{NAMESPACE}.svc" in names.get_values_for_type(x509.DNSName)
    for version in ("v1beta2", "v1beta1"):
        registered = eventually(
            lambda v=version: kube.json("get", "apiservice", f"{v}.visibility.kueue.x-k8s.io"),
            lambda a: any(
                c["type"] == "Available" and c["status"] == "True"
                for c in a.get("status", {}).get("conditions") or []
            ),
            f"the {version} visibility APIService available",
            180,
        )
        assert registered["spec"]["caBundle"] == secret["data"]["ca.crt"]
    too_big = _job("too-big", "never runs")
    too_big["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    kube.run("create", "-f", "-", stdin=json.dumps(too_big))
    path = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/real/pendingworkloads"
    summary = eventually(
        lambda: json.loads(kube.run("get", "--raw", path)),
        lambda got: len(got["items"]) == 1,
        "the Job that does not fit listed as pending",
        120,
    )
    (item,) = summary["items"]
    assert item["metadata"]["ownerReferences"][0]["name"] == "too-big"
    assert (item["positionInClusterQueue"], item["localQueueName"]) == (0, "main")
    kube.run("delete", "job", "too-big", "-n", TEAM)


def _leader(kube: Kube) -> str:
    return str(kube.json("get", "lease", LEASE, "-n", NAMESPACE)["spec"]["holderIdentity"])


def test_killing_the_leader_pod_fails_over_to_the_other_replica(release: str, kube: Kube) -> None:
    leader = _leader(kube)
    pods = {p["metadata"]["name"] for p in _pods(kube, "scheduler")}
    assert leader in pods
    killed_at = time.monotonic()
    kube.run("delete", "pod", leader, "-n", NAMESPACE, "--grace-period=0", "--force")
    # The killed pod may release the Lease on its way out (holder ""), so wait
    # for a holder, not just for the old one to go.  Who wins is a race: the
    # warm standby retries every retryPeriod, while the replacement pod tries
    # as soon as it starts; either is a correct failover.
    new_leader = eventually(
        lambda: _leader(kube),
        lambda holder: holder not in (leader, ""),
        "another replica to lead",
        90,
    )
    failover_seconds = time.monotonic() - killed_at
    live = {p["metadata"]["name"] for p in _pods(kube, "scheduler")}
    assert new_leader in live, f"the Lease names {new_leader}, not a live scheduler pod {live}"
    # Without a release the standby waits out the Lease (leaseDuration 15 s)
    # plus one retry; anything slower means it did not notice the dead leader.
    assert failover_seconds < 15 + 2 + 10, f"failover took {failover_seconds:.1f} s"
    lease = kube.json("get", "lease", LEASE, "-n", NAMESPACE)
    owners = [(o["kind"], o["name"]) for o in lease["metadata"].get("ownerReferences", [])]
    assert owners == [("Deployment", "kuota-scheduler")], "uninstall takes the Lease along"
    # The new leader admits work, and the Deployment is whole again.
    _run_queued_job(kube, "after-failover")
    eventually(
        lambda: _pods(kube, "scheduler"),
        lambda pods: len(pods) == 2 and all(_ready(p) for p in pods),
        "the replacement scheduler pod",
        120,
    )


# Kubernetes itself puts these in every namespace.
NAMESPACE_DEFAULTS = {("ServiceAccount", "default"), ("ConfigMap", "kube-root-ca.crt")}


def _namespaced_leftovers(kube: Kube) -> set[tuple[str, str]]:
    kinds = kube.run("api-resources", "--verbs=list", "--namespaced", "-o", "name").split()
    kinds = [k for k in kinds if k not in ("events", "events.events.k8s.io")]
    listed = kube.json("get", ",".join(kinds), "-n", NAMESPACE)["items"]
    return {(o["kind"], o["metadata"]["name"]) for o in listed} - NAMESPACE_DEFAULTS


def test_helm_uninstall_leaves_only_the_crds_and_the_queues(
    node_cluster: ClusterInfo, release: str, kube: Kube
) -> None:
    # The Jobs go first, while the webhook still converts kuota's resources.  The
    # ClusterQueue and ResourceFlavor stay: with crds.keep the queues are kept by
    # design (the chart's NOTES say so); they are instances of the kept CRDs.
    kube.run("delete", "namespace", TEAM, "--wait=true", "--timeout=120s")
    _helm(node_cluster, "uninstall", RELEASE, "-n", NAMESPACE, "--wait", "--timeout", "3m")
    # Two objects that kuota's processes create at run time are not part of the
    # release: the scheduler's leader-election Lease and the Secret that the
    # certificate bootstrap issues.  Each names its Deployment as its owner
    # (scheduler/kube/ownership.py), so the garbage collector removes them too.
    leftovers = eventually(
        lambda: _namespaced_leftovers(kube),
        lambda found: not found,
        "the release's pods, its Lease and its Secret to go",
        120,
    )
    assert leftovers == set()
    labelled = f"app.kubernetes.io/instance={RELEASE}"
    cluster_scoped = kube.run(
        "get",
        "clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations,"
        "apiservices",
        "-l",
        labelled,
        "-o",
        "name",
    )
    assert cluster_scoped.strip() == ""
    in_kube_system = kube.run(
        "get", "rolebindings", "-n", "kube-system", "-l", labelled, "-o", "name"
    )
    assert in_kube_system.strip() == ""
    for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
        assert "kuota-" not in kube.run("get", kind, "-o", "name")
    crds = kube.json("get", "crd", "-l", labelled)["items"]
    assert {c["spec"]["group"] for c in crds} == {"kueue.x-k8s.io"}
    assert kube.json("get", "clusterqueue", "real")["metadata"]["name"] == "real"
    assert all(c["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep" for c in crds)
