"""The visibility API through the real API server's aggregator (docs/visibility.md).

kubectl asks the API server; the aggregator proxies to the scheduler replica
over TLS with its front-proxy certificate, through an ExternalName Service
naming localhost (e2e.kuota_visibility); the replica answers from its queues
and asks RBAC with SubjectAccessReviews.  The scenarios follow Kueue's own
visibility specs: a ClusterQueue of 1 CPU held by a running Job, pending Jobs
of three WorkloadPriorityClasses in LocalQueues of two namespaces, and the
user and admin roles (the chart's kuota-batch-user-role and kuota-batch-admin-role, Kueue's
kueue-batch-user-role and kueue-batch-admin-role in the Kueue-compatible install).
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.visibility.discovery import unresolved_refs
from tests.builders import (
    cluster_queue,
    flavor_quotas,
    job,
    local_queue,
    resource_flavor,
    workload_priority_class,
)

from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle

pytestmark = pytest.mark.cluster

API = "/apis/visibility.kueue.x-k8s.io"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
DELAY = "pod-complete.stage.kwok.x-k8s.io/delay"


@dataclass
class Kubectl:
    binary: Path
    kubeconfig: Path

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.binary), "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def apply(self, *objects: Any) -> None:
        self.ok("apply", "-f", "-", stdin=yaml.safe_dump_all([o.build() for o in objects]))

    def raw(self, path: str, *, user: str | None = None) -> tuple[dict[str, Any] | None, str]:
        """GET ``path`` through the API server: (the JSON answer, or None with the error)."""
        extra = [f"--as={user}"] if user else []
        done = self.run("get", "--raw", path, *extra)
        if done.returncode != 0:
            return None, done.stderr.strip()
        return json.loads(done.stdout), ""


def eventually(probe: Callable[[], Any], accept: Callable[[Any], bool], what: str) -> Any:
    deadline = time.monotonic() + 60
    while True:
        last = probe()
        if accept(last):
            return last
        assert time.monotonic() < deadline, f"timed out waiting for {what}; last: {last!r}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def kubectl(cluster: ClusterHandle) -> Kubectl:
    return Kubectl(ToolPaths.resolve(build_if_missing=False).binary("kubectl"), cluster.kubeconfig)


@dataclass
class Queues:
    """One ClusterQueue of 1 CPU, LocalQueues ``a`` and ``b`` in namespace ``a``, ``b`` in
    namespace ``b``, priority classes high/mid/low; a Job of ``a`` holds the CPU."""

    cq: str
    ns_a: str
    ns_b: str
    high: str
    mid: str
    low: str


def pending_job(name: str, namespace: str, queue: str, priority_class: str, delay: str) -> Any:
    return (
        job(name, namespace)
        .queue(queue)
        .labels({PRIORITY_LABEL: priority_class})
        .requests(cpu="1")
        .template_annotations({DELAY: delay})
    )


@pytest.fixture
def queues(kubectl: Kubectl, visibility_api: None) -> Iterator[Queues]:
    suffix = uuid.uuid4().hex[:6]
    q = Queues(
        f"vis-{suffix}",
        f"vis-a-{suffix}",
        f"vis-b-{suffix}",
        f"high-{suffix}",
        f"mid-{suffix}",
        f"low-{suffix}",
    )
    kubectl.ok("create", "namespace", q.ns_a)
    kubectl.ok("create", "namespace", q.ns_b)
    kubectl.apply(
        resource_flavor(q.cq).node_labels({"instance-type": "ondemand"}),
        cluster_queue(q.cq).resource_group(flavor_quotas(q.cq, cpu="1")),
        local_queue("a", q.ns_a).cluster_queue(q.cq),
        local_queue("b", q.ns_a).cluster_queue(q.cq),
        local_queue("b", q.ns_b).cluster_queue(q.cq),
        workload_priority_class(q.high, 100),
        workload_priority_class(q.mid, 75),
        workload_priority_class(q.low, 50),
    )
    kubectl.apply(pending_job("blocker", q.ns_a, "a", q.high, "600s"))
    eventually(
        lambda: kubectl.ok("get", "job", "blocker", "-n", q.ns_a, "-o", "jsonpath={.spec.suspend}"),
        lambda suspended: suspended == "false",
        "the blocking Job started",
    )
    yield q
    for namespace in (q.ns_a, q.ns_b):
        kubectl.run("delete", "namespace", namespace, "--wait=false")
    kubectl.run("delete", "clusterqueue", q.cq, "--wait=false")
    kubectl.run("delete", "resourceflavor", q.cq, "--wait=false")
    kubectl.run("delete", "workloadpriorityclass", q.high, q.mid, q.low)


def places(summary: dict[str, Any] | None) -> list[tuple[str, str, int, str, int, int]]:
    assert summary is not None
    assert summary["kind"] == "PendingWorkloadsSummary"
    return [
        (
            item["metadata"]["namespace"],
            item["metadata"]["ownerReferences"][0]["name"],
            item["priority"],
            item["localQueueName"],
            item["positionInClusterQueue"],
            item["positionInLocalQueue"],
        )
        for item in summary["items"]
    ]


def test_pending_workloads_and_their_places(kubectl: Kubectl, queues: Queues) -> None:
    q = queues
    kubectl.apply(
        pending_job("lq-a-high", q.ns_a, "a", q.high, "1s"),
        pending_job("lq-b-mid", q.ns_b, "b", q.mid, "1s"),
        pending_job("lq-b-low", q.ns_b, "b", q.low, "1s"),
    )
    cq_path = f"{API}/v1beta2/clusterqueues/{q.cq}/pendingworkloads"
    summary = eventually(
        lambda: kubectl.raw(cq_path)[0],
        lambda got: got is not None and len(got["items"]) == 3,
        "three pending workloads",
    )
    assert places(summary) == [
        (q.ns_a, "lq-a-high", 100, "a", 0, 0),
        (q.ns_b, "lq-b-mid", 75, "b", 1, 0),
        (q.ns_b, "lq-b-low", 50, "b", 2, 1),
    ]
    owner = summary["items"][0]["metadata"]["ownerReferences"][0]
    assert (owner["apiVersion"], owner["kind"], bool(owner["uid"])) == ("batch/v1", "Job", True)
    v1beta1, _ = kubectl.raw(cq_path.replace("v1beta2", "v1beta1"))
    assert v1beta1 is not None and v1beta1["apiVersion"] == "visibility.kueue.x-k8s.io/v1beta1"
    assert places(v1beta1) == places(summary)

    lq_b = f"{API}/v1beta2/namespaces/{q.ns_b}/localqueues/b/pendingworkloads"
    assert places(kubectl.raw(lq_b)[0]) == [
        (q.ns_b, "lq-b-mid", 75, "b", 1, 0),
        (q.ns_b, "lq-b-low", 50, "b", 2, 1),
    ]
    same_name = f"{API}/v1beta2/namespaces/{q.ns_a}/localqueues/b/pendingworkloads"
    assert places(kubectl.raw(same_name)[0]) == []
    assert places(kubectl.raw(f"{cq_path}?limit=1&offset=1")[0]) == [
        (q.ns_b, "lq-b-mid", 75, "b", 1, 0)
    ]
    assert places(kubectl.raw(f"{lq_b}?offset=1")[0]) == [(q.ns_b, "lq-b-low", 50, "b", 2, 1)]

    _, missing = kubectl.raw(f"{API}/v1beta2/clusterqueues/no-such-{q.cq}/pendingworkloads")
    assert f'clusterqueue.visibility.kueue.x-k8s.io "no-such-{q.cq}" not found' in missing
    _, bad = kubectl.raw(f"{cq_path}?limit=all")
    assert "BadRequest" in bad or "invalid syntax" in bad

    # The blocker finishes: the head is admitted and everyone moves up one place.
    kubectl.ok("delete", "job", "blocker", "-n", q.ns_a, "--cascade=foreground", "--wait=false")
    after = eventually(
        lambda: kubectl.raw(cq_path)[0],
        lambda got: got is not None and len(got["items"]) == 2,
        "the head admitted",
    )
    assert places(after) == [
        (q.ns_b, "lq-b-mid", 75, "b", 0, 0),
        (q.ns_b, "lq-b-low", 50, "b", 1, 1),
    ]


def test_rbac_decides_who_sees_which_queue(kubectl: Kubectl, queues: Queues) -> None:
    q = queues
    kubectl.apply(
        pending_job("lq-a-low", q.ns_a, "a", q.low, "1s"),
        pending_job("lq-b-mid", q.ns_b, "b", q.mid, "1s"),
    )
    user = f"system:serviceaccount:{q.ns_a}:default"
    cq_path = f"{API}/v1beta2/clusterqueues/{q.cq}/pendingworkloads"
    lq_a = f"{API}/v1beta2/namespaces/{q.ns_a}/localqueues/a/pendingworkloads"
    lq_b = f"{API}/v1beta2/namespaces/{q.ns_b}/localqueues/b/pendingworkloads"

    _, refused = kubectl.raw(lq_a, user=user)
    assert "(Forbidden)" in refused and f'User "{user}" cannot get resource' in refused

    kubectl.ok(
        "create",
        "rolebinding",
        "read-pending",
        "-n",
        q.ns_a,
        "--clusterrole=kuota-batch-user-role",
        f"--serviceaccount={q.ns_a}:default",
    )
    mine = eventually(
        lambda: kubectl.raw(lq_a, user=user)[0],
        lambda got: got is not None and len(got["items"]) == 1,
        "the user role to take effect",
    )
    # Only its own namespace's workload, with its place in the shared ClusterQueue.
    assert places(mine) == [(q.ns_a, "lq-a-low", 50, "a", 1, 0)]
    assert "(Forbidden)" in kubectl.raw(lq_b, user=user)[1]
    cluster_scope = kubectl.raw(cq_path, user=user)[1]
    assert "(Forbidden)" in cluster_scope and "at the cluster scope" in cluster_scope
    missing = kubectl.raw(lq_a.replace("/localqueues/a/", "/localqueues/none/"), user=user)[1]
    assert "(NotFound)" in missing

    binding = f"read-pending-{q.cq}"
    kubectl.ok(
        "create",
        "clusterrolebinding",
        binding,
        "--clusterrole=kuota-batch-admin-role",
        f"--serviceaccount={q.ns_a}:default",
    )
    try:
        everything = eventually(
            lambda: kubectl.raw(cq_path, user=user)[0],
            lambda got: got is not None,
            "the admin role to take effect",
        )
        assert [p[1] for p in places(everything)] == ["lq-b-mid", "lq-a-low"]
    finally:
        kubectl.run("delete", "clusterrolebinding", binding)


def test_discovery_and_the_aggregated_openapi_stay_whole(
    kubectl: Kubectl, visibility_api: None
) -> None:
    group, _ = kubectl.raw(API)
    assert group is not None and group["preferredVersion"]["version"] == "v1beta2"
    document = json.loads(kubectl.ok("get", "--raw", "/openapi/v2"))
    assert unresolved_refs(document) == []
    paths = [p for p in document["paths"] if p.startswith(API)]
    assert f"{API}/v1beta2/clusterqueues/{{name}}/pendingworkloads" in paths
