"""The snapshot renderer alone, on small stand-ins of the engine's read-outs:
the contract's keys, ``flavors`` empty while pending, canonical quantities."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scheduler.api.quantity import Quantity
from scheduler.api.topology_assignment import DomainAssignment, TopologyAssignment
from scheduler.cli.render import snapshot_json, snapshot_table


@dataclass
class FakePodSet:
    name: str
    flavors: Mapping[str, str]
    topology_assignment: TopologyAssignment | None = None


@dataclass
class FakeState:
    key: str
    state: str
    cluster_queue: str | None
    admission: tuple[FakePodSet, ...] = ()
    message: str = ""
    evictions: int = 0


@dataclass
class FakeQueue:
    name: str
    pending: int
    admitted: int
    usage: Mapping[str, Mapping[str, Quantity]] = field(default_factory=dict)


def formatter(resource: str, value: Quantity) -> str:
    return f"<{resource}:{value}>"


def test_snapshot_json_keys_and_values() -> None:
    states = [
        FakeState(
            "ns/a",
            "Admitted",
            "cq",
            (FakePodSet("main", {"cpu": "spot"}),),
            "Quota reserved in ClusterQueue cq",
        ),
        FakeState(
            "ns/b",
            "Pending",
            None,
            (FakePodSet("main", {"cpu": "spot"}),),
            "LocalQueue lq doesn't exist",
            2,
        ),
    ]
    queues = [FakeQueue("cq", 1, 1, {"spot": {"cpu": Quantity.parse("1500m")}})]
    report = snapshot_json(states, queues, formatter)
    assert report == {
        "workloads": {
            "ns/a": {
                "state": "Admitted",
                "clusterQueue": "cq",
                "flavors": {"main": {"cpu": "spot"}},
                "evictions": 0,
                "message": "Quota reserved in ClusterQueue cq",
            },
            "ns/b": {
                "state": "Pending",
                "clusterQueue": None,
                "flavors": {},
                "evictions": 2,
                "message": "LocalQueue lq doesn't exist",
            },
        },
        "clusterQueues": {
            "cq": {"pending": 1, "admitted": 1, "usage": {"spot": {"cpu": "<cpu:1500m>"}}}
        },
    }


def test_table_columns_line_up() -> None:
    states = [
        FakeState(
            "ns/a-long-name",
            "Admitted",
            "cq",
            (FakePodSet("main", {"cpu": "f", "memory": "f"}),),
            "ok",
        ),
        FakeState("ns/b", "Pending", None, (), "waiting"),
    ]
    text = snapshot_table(snapshot_json(states, [FakeQueue("cq", 1, 1)], formatter))
    header, first, second = text.splitlines()[:3]
    for column in ("STATE", "CLUSTERQUEUE", "FLAVORS", "EVICTIONS", "MESSAGE"):
        assert first[header.index(column) - 1] == " " and second[header.index(column) - 1] == " "
    assert "main[cpu,memory=f]" in first
    assert second.split() == ["ns/b", "Pending", "-", "-", "0", "waiting"]


def test_json_says_where_pods_were_placed_only_when_placed_by_topology() -> None:
    placed = TopologyAssignment(
        ("block", "rack"),
        (DomainAssignment(("b1", "r1"), 3), DomainAssignment(("b1", "r2"), 1)),
    )
    states = [
        FakeState("ns/tas", "Admitted", "cq", (FakePodSet("main", {"cpu": "f"}, placed),)),
        FakeState("ns/plain", "Admitted", "cq", (FakePodSet("main", {"cpu": "f"}),)),
        FakeState("ns/waiting", "Pending", None, (FakePodSet("main", {"cpu": "f"}, placed),)),
    ]
    workloads = snapshot_json(states, [], formatter)["workloads"]
    assert workloads["ns/tas"]["topology"] == {
        "main": {
            "levels": ["block", "rack"],
            "domains": [{"values": ["b1", "r1"], "count": 3}, {"values": ["b1", "r2"], "count": 1}],
        }
    }
    assert "topology" not in workloads["ns/plain"]
    assert "topology" not in workloads["ns/waiting"]
