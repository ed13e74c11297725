"""``kuota simulate`` and ``kuota explain`` with topology-aware scheduling.

See docs/concepts.md#topology-aware-scheduling: a simulation reads Topologies,
v1 Nodes and the pods bound to them, places what it admits, and says where in
``--json``; explain says in numbers why pods do not fit a topology.
"""

from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

import yaml

from scheduler.api.topology_assignment import DomainAssignment, TopologyAssignment
from scheduler.cli.explain import explain_workload
from scheduler.cli.explain_target import Target, find_target
from scheduler.cli.live import ClusterObjects
from scheduler.cli.main import main
from scheduler.jobs import workload_from_job
from tests.cli.live_builders import T0

HOST = "kubernetes.io/hostname"


def node(rack: str, index: int, cpu: str = "2") -> dict[str, Any]:
    name = f"{rack}-n{index}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"pool": "tas", "rack": rack, HOST: name}},
        "status": {
            "allocatable": {"cpu": cpu, "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def job(name: str, pods: int, required: str | None = "rack") -> dict[str, Any]:
    annotations = {"kueue.x-k8s.io/podset-required-topology": required} if required else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "creationTimestamp": (T0 + timedelta(seconds=len(name))).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        },
        "spec": {
            "parallelism": pods,
            "completions": pods,
            "suspend": True,
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                    ],
                    "restartPolicy": "Never",
                },
            },
        },
    }


QUEUES: list[dict[str, Any]] = [
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": "racks"},
        "spec": {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": HOST}]},
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "tas"},
        "spec": {"nodeLabels": {"pool": "tas"}, "topologyName": "racks"},
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "tas", "resources": [{"name": "cpu", "nominalQuota": 64}]}
                    ],
                }
            ],
        },
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": {"clusterQueue": "cq"},
    },
]
NODES = [node(rack, index) for rack in ("r1", "r2") for index in (0, 1)]
"""Two racks of two 2-cpu nodes: 4 pods of 1 cpu fit in one rack."""


def simulate(*objects: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    text = yaml.safe_dump_all([*QUEUES, *NODES, *objects])
    code = main(["simulate", "-", "--json"], stdin=io.StringIO(text), stdout=out, stderr=err)
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def test_simulate_places_a_required_rack_and_says_where_in_json() -> None:
    code, report, err = simulate(job("fits", 4))
    assert code == 0, err
    admitted = report["workloads"]["ns/job-fits-" + _suffix("fits")]
    assert admitted["state"] == "Admitted"
    placed = admitted["topology"]["main"]
    # The lowest level is the hostname: Kueue's assignment then names only nodes.
    assert placed["levels"] == [HOST]
    assert sum(domain["count"] for domain in placed["domains"]) == 4
    assert len({domain["values"][0].split("-")[0] for domain in placed["domains"]}) == 1, placed


def test_simulate_keeps_pending_what_no_rack_holds_with_kueues_reason() -> None:
    code, report, err = simulate(job("large", 5))
    assert code == 0, err
    pending = report["workloads"]["ns/job-large-" + _suffix("large")]
    assert pending["state"] == "Pending"
    assert "topology" not in pending
    assert "topology" in pending["message"].lower(), pending["message"]


def test_a_bound_pod_takes_room_a_placement_cannot_use() -> None:
    bound = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "other", "namespace": "ns"},
        "spec": {
            "nodeName": "r1-n0",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}],
        },
        "status": {"phase": "Running"},
    }
    code, report, err = simulate(bound, job("fits", 4))
    assert code == 0, err
    placed = report["workloads"]["ns/job-fits-" + _suffix("fits")]["topology"]["main"]
    assert {domain["values"][0] for domain in placed["domains"]} == {"r2-n0", "r2-n1"}, placed


def test_explain_gives_the_numbers_of_a_failed_placement() -> None:
    objects = _live(job("large", 5))
    found = find_target(objects, "job/large", "ns")
    assert isinstance(found, Target), found
    lines = explain_workload(objects, found, T0 + timedelta(minutes=5))
    assert (
        "  - needs 5 pods in one rack; the largest rack of flavor tas has room for 4, even "
        "with every workload placed by topology gone; only more (or larger) nodes help" in lines
    ), lines


def _suffix(name: str) -> str:
    made = workload_from_job(job(name, 1))
    return str(made["metadata"]["name"]).rsplit("-", 1)[-1]


def _live(*jobs: dict[str, Any]) -> ClusterObjects:
    objects = ClusterObjects()
    objects.topologies = [QUEUES[0]]
    objects.resource_flavors = [QUEUES[1]]
    objects.cluster_queues = [QUEUES[2]]
    objects.local_queues = [QUEUES[3]]
    objects.nodes = list(NODES)
    for item in jobs:
        objects.jobs.append(item)
        objects.workloads.append(workload_from_job(item))
    return objects


def test_explain_says_where_an_admitted_job_was_placed() -> None:
    objects = _live(job("fits", 3))
    workload = objects.workloads[0]
    assignment = TopologyAssignment(
        (HOST,), (DomainAssignment(("r1-n0",), 2), DomainAssignment(("r1-n1",), 1))
    )
    workload["status"] = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {
                    "name": "main",
                    "count": 3,
                    "flavors": {"cpu": "tas"},
                    "resourceUsage": {"cpu": "3"},
                    "topologyAssignment": assignment.encoded(),
                }
            ],
        },
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
            {"type": "Admitted", "status": "True", "reason": "Admitted"},
        ],
    }
    found = find_target(objects, "job/fits", "ns")
    assert isinstance(found, Target), found
    lines = explain_workload(objects, found, T0 + timedelta(minutes=5))
    assert "Placed by topology: pod set main, 3 pods: 2 on r1-n0, 1 on r1-n1" in lines, lines
