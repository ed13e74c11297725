"""Topology-aware scheduling on the local cluster (docs/concepts.md#topology-aware-scheduling).

Eight kwok nodes of 2 CPUs in two blocks of two racks (custom level labels,
a taint only the TAS flavor tolerates, so no other test's pods land there),
a Topology, a TAS flavor and a ClusterQueue with quota to spare: whatever
waits here waits for the topology, never for quota.  The real job
controller creates the pods, kuota lifts their topology gate with their
domain's node selector, and the real kube-scheduler binds them: a test
checks the nodes the pods end on, as a user would.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes_asyncio import client

from scheduler.api.topology_assignment import TopologyAssignment

from .kuota_scheduler import SchedulerReplica
from .test_scheduler import GROUP, VERSION, condition, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster

HOST = "kubernetes.io/hostname"
BLOCK, RACK = "e2e.kuota.io/block", "e2e.kuota.io/rack"
TAINT_KEY = "e2e.kuota.io/topology"


@dataclass(frozen=True)
class Cluster:
    """The topology's names: nodes by rack, the flavor, the queues."""

    suffix: str
    racks: dict[str, list[str]]

    @property
    def topology(self) -> str:
        return f"tas-{self.suffix}"

    @property
    def taint(self) -> dict[str, str]:
        return {"key": TAINT_KEY, "value": self.suffix, "effect": "NoSchedule"}

    def rack_of(self, node: str) -> str:
        return next(rack for rack, nodes in self.racks.items() if node in nodes)


def _kueue(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


@asynccontextmanager
async def topology(
    api: client.ApiClient, namespace: str, blocks: int, racks_per_block: int, per_rack: int
) -> AsyncIterator[Cluster]:
    """Nodes of 2 CPUs, ``per_rack`` in each rack, the Topology, flavor and queues."""
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    suffix = namespace.rsplit("-", 1)[-1]
    racks: dict[str, list[str]] = {}
    created: list[str] = []
    cluster = Cluster(suffix, racks)
    for block in (f"b{b}" for b in range(blocks)):
        for rack in (f"r{r}" for r in range(racks_per_block)):
            rack_name = f"{block}-{rack}"
            for index in range(per_rack):
                name = f"tas-{suffix}-{rack_name}-n{index}"
                racks.setdefault(rack_name, []).append(name)
                labels = {HOST: name, "pool": f"tas-{suffix}", BLOCK: block, RACK: rack_name}
                labels.update({"type": "kwok", "kubernetes.io/os": "linux"})
                capacity = {"cpu": "2", "memory": "8Gi", "pods": "110"}
                await core.create_node(
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {"name": name, "labels": labels},
                        "spec": {"taints": [cluster.taint]},
                        "status": {"capacity": capacity, "allocatable": capacity},
                    }
                )
                created.append(name)
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "topologies",
        _kueue(
            "Topology",
            cluster.topology,
            {"levels": [{"nodeLabel": x} for x in (BLOCK, RACK, HOST)]},
        ),
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "resourceflavors",
        _kueue(
            "ResourceFlavor",
            cluster.topology,
            {
                "nodeLabels": {"pool": f"tas-{suffix}"},
                "topologyName": cluster.topology,
                "tolerations": [{**cluster.taint, "operator": "Equal"}],
            },
        ),
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        _kueue(
            "ClusterQueue",
            cluster.topology,
            {
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": cluster.topology,
                                "resources": [{"name": "cpu", "nominalQuota": "256"}],
                            }
                        ],
                    }
                ],
            },
        ),
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "lq"},
            "spec": {"clusterQueue": cluster.topology},
        },
    )
    try:
        yield cluster
    finally:
        batch = client.BatchV1Api(api)
        for item in (await batch.list_namespaced_job(namespace)).items:
            await batch.delete_namespaced_job(
                item.metadata.name, namespace, propagation_policy="Background"
            )
        await core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
        for plural in ("clusterqueues", "resourceflavors", "topologies"):
            try:
                await custom.delete_cluster_custom_object(GROUP, VERSION, plural, cluster.topology)
            except client.ApiException:
                pass
        for name in created:
            try:
                await core.delete_node(name)
            except client.ApiException as gone:
                if gone.status != 404:  # a test may have deleted it
                    raise


@pytest.fixture
async def topology_cluster(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str
) -> AsyncIterator[Cluster]:
    """Eight nodes: two blocks of two racks of two."""
    async with topology(api, namespace, 2, 2, 2) as cluster:
        yield cluster


@pytest.fixture
async def large_topology(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str
) -> AsyncIterator[Cluster]:
    """64 nodes: four blocks of four racks of four (8 CPUs a rack, 32 a block)."""
    async with topology(api, namespace, 4, 4, 4) as cluster:
        yield cluster


def tas_job(name: str, count: int, **annotations: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
        ],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "parallelism": count,
            "completions": count,
            "completionMode": "Indexed",
            "template": {
                "metadata": {
                    "annotations": {
                        "pod-complete.stage.kwok.x-k8s.io/delay": "600s",
                        **annotations,
                    }
                },
                "spec": spec,
            },
        },
    }


REQUIRED_RACK = {"kueue.x-k8s.io/podset-required-topology": RACK}
PREFERRED_RACK = {"kueue.x-k8s.io/podset-preferred-topology": RACK}


async def admitted_assignment(
    api: client.ApiClient, namespace: str, job: str
) -> TopologyAssignment:
    async def workload() -> dict[str, Any]:
        return (await workloads_of(api, namespace)).get(job) or {}

    admitted = await eventually(
        workload,
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "True",
        timeout=90,
        what=f"the Workload of {job} admitted",
    )
    assignment = admitted["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    return TopologyAssignment.decoded(assignment)


async def bound_nodes(api: client.ApiClient, namespace: str, job: str, count: int) -> list[str]:
    """The nodes the job's pods were bound to, once all ``count`` are."""
    core = client.CoreV1Api(api)

    async def pods() -> list[Any]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector=f"batch.kubernetes.io/job-name={job}"
        )
        return listed.items

    bound = await eventually(
        pods,
        lambda items: len(items) == count and all(pod.spec.node_name for pod in items),
        timeout=90,
        what=f"the {count} pods of {job} bound to nodes",
    )
    for pod in bound:
        assert not [
            g for g in pod.spec.scheduling_gates or [] if g.name == "kueue.x-k8s.io/topology"
        ]
    return sorted(pod.spec.node_name for pod in bound)


async def test_a_required_rack_puts_every_pod_of_the_job_in_one_rack(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, tas_job("rack", 4, **REQUIRED_RACK))
    assignment = await admitted_assignment(api, namespace, "rack")
    assert assignment.levels == (HOST,)
    assert sum(domain.count for domain in assignment.domains) == 4
    placed = {domain.values[0] for domain in assignment.domains}
    assert len({topology_cluster.rack_of(node) for node in placed}) == 1
    nodes = await bound_nodes(api, namespace, "rack", 4)
    assert set(nodes) == placed, "each pod runs where the assignment put it"
    job = await batch.read_namespaced_job("rack", namespace)
    gates = [g.name for g in job.spec.template.spec.scheduling_gates or []]
    assert gates == ["kueue.x-k8s.io/topology"], "the started template carries the gate"


async def test_a_preferred_rack_spreads_over_the_racks_of_one_block(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    await client.BatchV1Api(api).create_namespaced_job(
        namespace, tas_job("spread", 6, **PREFERRED_RACK)
    )
    await admitted_assignment(api, namespace, "spread")
    nodes = await bound_nodes(api, namespace, "spread", 6)
    racks = {topology_cluster.rack_of(node) for node in nodes}
    assert len(racks) == 2 and len({rack.split("-")[0] for rack in racks}) == 1


async def test_a_job_no_rack_can_hold_waits_with_kueues_reason_and_message(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    await client.BatchV1Api(api).create_namespaced_job(
        namespace, tas_job("too-big", 5, **REQUIRED_RACK)
    )

    async def workload() -> dict[str, Any]:
        return (await workloads_of(api, namespace)).get("too-big") or {}

    waiting = await eventually(
        workload,
        lambda wl: (
            (condition(wl, "QuotaReserved") or {}).get("reason") == "TopologyPlacementFailed"
        ),
        timeout=90,
        what="the Workload pending for its topology",
    )
    message = condition(waiting, "QuotaReserved")["message"]
    assert message == (
        "couldn't assign flavors to pod set main: "
        f'topology "{topology_cluster.topology}" allows to fit only 4 out of 5 pod(s)'
    )


def daemon(name: str, node: str, cluster: Cluster, cpu: str = "2") -> dict[str, Any]:
    """A pod bound to ``node`` by hand, as a DaemonSet's would be: not queued, not kuota's."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "600s"},
        },
        "spec": {
            "nodeName": node,
            "tolerations": [{**cluster.taint, "operator": "Equal"}],
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }


async def test_on_64_nodes_jobs_go_to_whole_blocks_and_racks_around_other_pods(
    large_topology: Cluster, api: client.ApiClient, namespace: str
) -> None:
    """Block b0 has one node taken in each rack by pods kuota does not manage: 24 CPUs free.

    A job of 30 pods that requires one block goes to another block, whole; a
    job of 8 that requires one rack then gets a rack left entirely free.
    """
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    for rack in range(4):
        node = large_topology.racks[f"b0-r{rack}"][0]
        await core.create_namespaced_pod(namespace, daemon(f"daemon-{rack}", node, large_topology))
    await batch.create_namespaced_job(
        namespace, tas_job("block", 30, **{"kueue.x-k8s.io/podset-required-topology": BLOCK})
    )
    nodes = await bound_nodes(api, namespace, "block", 30)
    blocks = {large_topology.rack_of(node).split("-")[0] for node in nodes}
    assert len(blocks) == 1 and blocks != {"b0"}, blocks
    await batch.create_namespaced_job(namespace, tas_job("rack", 8, **REQUIRED_RACK))
    rack_nodes = await bound_nodes(api, namespace, "rack", 8)
    racks = {large_topology.rack_of(node) for node in rack_nodes}
    assert len(racks) == 1, racks
    assert not racks & {large_topology.rack_of(node) for node in nodes}
    assert not racks & {f"b0-r{rack}" for rack in range(4)}


async def test_pods_kuota_does_not_manage_take_room_in_the_topology(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api)
    busy = topology_cluster.racks["b0-r0"][0]
    await core.create_namespaced_pod(namespace, daemon("daemon", busy, topology_cluster))
    await client.BatchV1Api(api).create_namespaced_job(
        namespace, tas_job("beside", 4, **REQUIRED_RACK)
    )
    assignment = await admitted_assignment(api, namespace, "beside")
    placed = {domain.values[0] for domain in assignment.domains}
    assert busy not in placed
    assert {topology_cluster.rack_of(node) for node in placed} != {"b0-r0"}
    await bound_nodes(api, namespace, "beside", 4)


async def test_a_queue_whose_flavor_names_a_missing_topology_is_inactive(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    custom = client.CustomObjectsApi(api)
    await custom.delete_cluster_custom_object(
        GROUP, VERSION, "topologies", topology_cluster.topology
    )

    async def queue() -> dict[str, Any]:
        return await custom.get_cluster_custom_object(
            GROUP, VERSION, "clusterqueues", topology_cluster.topology
        )

    inactive = await eventually(
        queue,
        lambda cq: (condition(cq, "Active") or {}).get("reason") == "TopologyNotFound",
        timeout=60,
        what="the ClusterQueue inactive for its missing Topology",
    )
    assert condition(inactive, "Active")["message"] == (
        "Can't admit new workloads: there is no Topology "
        f'"{topology_cluster.topology}" for TAS flavor "{topology_cluster.topology}".'
    )


async def test_a_node_deleted_under_a_placed_job_evicts_it_and_it_is_placed_again(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, tas_job("moved", 4, **REQUIRED_RACK))
    first = await admitted_assignment(api, namespace, "moved")
    before = {domain.values[0] for domain in first.domains}
    await bound_nodes(api, namespace, "moved", 4)
    lost = sorted(before)[0]
    await client.CoreV1Api(api).delete_node(lost)

    async def workload() -> dict[str, Any]:
        return (await workloads_of(api, namespace)).get("moved") or {}

    evicted = await eventually(
        workload,
        lambda wl: (condition(wl, "Requeued") or {}).get("reason") == "NodeFailures",
        timeout=90,
        what="the Workload evicted for its lost node and queued again",
    )
    assert condition(evicted, "Requeued")["message"] == (
        f"Workload was evicted as there was no replacement for unhealthy node(s): {lost}"
    )
    again = await eventually(
        workload,
        lambda wl: (
            (condition(wl, "QuotaReserved") or {}).get("status") == "True"
            and lost
            not in {
                d.values[0]
                for d in TopologyAssignment.decoded(
                    wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
                ).domains
            }
        ),
        timeout=120,
        what="the Workload placed again without the lost node",
    )
    placed = TopologyAssignment.decoded(
        again["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    )
    assert len({topology_cluster.rack_of(d.values[0]) for d in placed.domains}) == 1


async def test_a_node_deleted_under_a_placed_job_gets_its_pods_a_new_node_in_the_rack(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    """Two pods that fit one node of the rack: the rack's other node takes them over."""
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, tas_job("kept", 2, **REQUIRED_RACK))
    lost, other = await _placed_on_one_node(topology_cluster, api, namespace, "kept")
    await client.CoreV1Api(api).delete_node(lost)
    moved = await _moved_to(api, namespace, "kept", other)
    assert condition(moved, "Evicted") is None, "replaced, not evicted"
    assert (condition(moved, "QuotaReserved") or {}).get("status") == "True"
    # The pods of the lost node are collected; the Job's new pods go to the new node.
    await _both_pods_bound_to(api, namespace, "kept", other, timeout=150)


async def test_a_node_tainted_under_a_placed_job_gets_its_pods_a_new_node_in_the_rack(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    """A NoExecute taint the job does not tolerate: Kubernetes evicts its pods there, and
    kuota moves them to the rack's other node (TASReplaceNodeOnNodeTaints, on by default).

    Every node also carries the flavor's NoSchedule taint, which the flavor tolerates for
    good: that one fails nothing."""
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    await batch.create_namespaced_job(namespace, tas_job("tainted", 2, **REQUIRED_RACK))
    lost, other = await _placed_on_one_node(topology_cluster, api, namespace, "tainted")
    broken = {"key": "e2e.kuota.io/broken", "value": "yes", "effect": "NoExecute"}
    await core.patch_node(lost, {"spec": {"taints": [topology_cluster.taint, broken]}})
    moved = await _moved_to(api, namespace, "tainted", other)
    assert condition(moved, "Evicted") is None, "replaced, not evicted"
    await _both_pods_bound_to(api, namespace, "tainted", other, timeout=90)


async def test_a_pod_steered_to_a_node_that_is_deleted_is_failed_and_made_again(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    """Pods kept Pending by a gate of their own after kuota lifted the topology gate: the
    node they were steered to is deleted, so kuota fails them (Kueue's
    UnschedulableOnAssignedNode) and the Job makes new pods, steered to the new node."""
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    job = tas_job("held", 2, **REQUIRED_RACK)
    job["spec"]["template"]["spec"]["schedulingGates"] = [{"name": "e2e.kuota.io/hold"}]
    job["spec"]["backoffLimit"] = 6
    await batch.create_namespaced_job(namespace, job)
    first = await admitted_assignment(api, namespace, "held")
    (lost,) = {domain.values[0] for domain in first.domains}
    (other,) = [n for n in topology_cluster.racks[topology_cluster.rack_of(lost)] if n != lost]

    async def pods() -> list[Any]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector="batch.kubernetes.io/job-name=held"
        )
        return list(listed.items)

    def steered_to(items: list[Any], node: str) -> list[Any]:
        return [
            p
            for p in items
            if (p.spec.node_selector or {}).get(HOST) == node and p.status.phase == "Pending"
        ]

    before = await eventually(
        pods,
        lambda items: len(steered_to(items, lost)) == 2,
        timeout=60,
        what="both pods steered to their node, held Pending by their own gate",
    )
    await core.delete_node(lost)
    after = await eventually(
        pods,
        lambda items: (
            len(steered_to(items, other)) == 2
            and all(p.status.phase == "Failed" for p in items if p.metadata.uid in _uids(before))
        ),
        timeout=90,
        what="the steered pods failed and two new ones steered to the rack's other node",
    )
    for failed in (p for p in after if p.metadata.uid in _uids(before)):
        (terminated,) = [c for c in failed.status.conditions or [] if c.type == "TerminatedByKueue"]
        assert (terminated.status, terminated.reason) == ("True", "UnschedulableOnAssignedNode")


def _uids(pods: list[Any]) -> set[str]:
    return {p.metadata.uid for p in pods}


async def _placed_on_one_node(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str, job: str
) -> tuple[str, str]:
    """(the node the job's two pods run on, the other node of its rack), once bound."""
    first = await admitted_assignment(api, namespace, job)
    await bound_nodes(api, namespace, job, 2)
    (lost,) = {domain.values[0] for domain in first.domains}
    rack = topology_cluster.rack_of(lost)
    (other,) = [node for node in topology_cluster.racks[rack] if node != lost]
    return lost, other


async def _moved_to(api: client.ApiClient, namespace: str, job: str, node: str) -> dict[str, Any]:
    """The job's Workload once its admission places every pod on ``node``."""

    async def workload() -> dict[str, Any]:
        return (await workloads_of(api, namespace)).get(job) or {}

    def placed(wl: dict[str, Any]) -> set[str]:
        assignment = wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
        return {d.values[0] for d in TopologyAssignment.decoded(assignment).domains}

    return await eventually(
        workload,
        lambda wl: bool((wl.get("status") or {}).get("admission")) and placed(wl) == {node},
        timeout=90,
        what=f"the admission's topology assignment moved to {node}",
    )


async def _both_pods_bound_to(
    api: client.ApiClient, namespace: str, job: str, node: str, *, timeout: float
) -> None:
    nodes = await eventually(
        lambda: _bound_pod_nodes(api, namespace, job),
        lambda found: found == [node, node],
        timeout=timeout,
        what=f"the job's two pods bound to {node}",
    )
    assert nodes == [node, node]


async def _bound_pod_nodes(api: client.ApiClient, namespace: str, job: str) -> list[str]:
    listed = await client.CoreV1Api(api).list_namespaced_pod(
        namespace, label_selector=f"batch.kubernetes.io/job-name={job}"
    )
    return sorted(
        pod.spec.node_name
        for pod in listed.items
        if pod.spec.node_name and pod.metadata.deletion_timestamp is None
    )


async def test_an_elastic_job_placed_by_topology_scales_up_through_a_new_slice(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    """docs/concepts.md#elastic-jobs: the new slice is placed, and the new pod gets its domain."""
    body = tas_job("grow", 1, **{"kueue.x-k8s.io/podset-unconstrained-topology": "true"})
    body["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    body["spec"].pop("completionMode")
    body["spec"]["completions"] = 10
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, body)
    first = await admitted_assignment(api, namespace, "grow")
    assert sum(domain.count for domain in first.domains) == 1
    await bound_nodes(api, namespace, "grow", 1)

    await batch.patch_namespaced_job("grow", namespace, {"spec": {"parallelism": 2}})
    custom = client.CustomObjectsApi(api)

    async def new_slice() -> dict[str, Any]:
        listed = await custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "workloads")
        for item in listed["items"]:
            if "kueue.x-k8s.io/workload-slice-replacement-for" in (
                item["metadata"].get("annotations") or {}
            ):
                return dict(item)
        return {}

    admitted = await eventually(
        new_slice,
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "True",
        timeout=90,
        what="the new slice admitted",
    )
    raw = admitted["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert sum(domain.count for domain in TopologyAssignment.decoded(raw).domains) == 2
    nodes = await bound_nodes(api, namespace, "grow", 2)
    assert all(node.startswith(f"tas-{topology_cluster.suffix}-") for node in nodes)


def group_pod(group: str, index: int, total: int, **annotations: str) -> dict[str, Any]:
    """Pod ``index`` of a plain pod group of ``total`` (1 CPU each, running for a while)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{group}-{index}",
            "labels": {
                "kueue.x-k8s.io/queue-name": "lq",
                "kueue.x-k8s.io/pod-group-name": group,
                "kueue.x-k8s.io/pod-group-pod-index": str(index),
            },
            "annotations": {
                "kueue.x-k8s.io/pod-group-total-count": str(total),
                "pod-complete.stage.kwok.x-k8s.io/delay": "600s",
                **annotations,
            },
        },
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
            ],
        },
    }


async def test_a_pod_group_requiring_a_rack_lands_in_one_rack_each_pod_steered_to_its_node(
    topology_cluster: Cluster, api: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api)
    for index in range(4):
        created = await core.create_namespaced_pod(
            namespace, group_pod("ranks", index, 4, **REQUIRED_RACK)
        )
        gates = [g.name for g in created.spec.scheduling_gates or []]
        assert gates == ["kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology"]
    assignment = await admitted_assignment(api, namespace, "ranks-0")  # its first owner
    places = [d.values[0] for d in assignment.domains for _ in range(d.count)]

    async def members() -> list[Any]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector="kueue.x-k8s.io/pod-group-name=ranks"
        )
        return listed.items

    bound = await eventually(
        members,
        lambda items: len(items) == 4 and all(pod.spec.node_name for pod in items),
        timeout=90,
        what="the group's four pods bound to nodes",
    )
    assert len({topology_cluster.rack_of(pod.spec.node_name) for pod in bound}) == 1
    for pod in bound:
        assert not pod.spec.scheduling_gates
        assert pod.spec.node_selector[HOST] == pod.spec.node_name, "steered to its node"
        rank = int(pod.metadata.labels["kueue.x-k8s.io/pod-group-pod-index"])
        assert pod.spec.node_name == places[rank], "pod n takes the assignment's n-th place"
