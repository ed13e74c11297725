"""The fake nodes of the local cluster: a small heterogeneous fleet.

They mirror the seed examples: on-demand and tainted spot capacity selected by
``instance-type``, and one GPU node selected by the accelerator label, so that
ResourceFlavors written for a real cloud find matching nodes here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class NodeSpec:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()
    capacity: dict[str, str] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        """The Node object; kwok keeps the status capacity given at creation."""
        labels = {
            "kubernetes.io/hostname": self.name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "type": "kwok",
            **self.labels,
        }
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.name, "labels": labels},
            "spec": {"taints": [dict(taint) for taint in self.taints]} if self.taints else {},
            "status": {"capacity": dict(self.capacity), "allocatable": dict(self.capacity)},
        }


_CPU_NODE = {"cpu": "8", "memory": "32Gi", "pods": "110"}
SPOT_TAINT = {"key": "spot", "value": "true", "effect": "NoSchedule"}


def default_fleet() -> tuple[NodeSpec, ...]:
    """2 on-demand, 2 tainted spot, 1 GPU node."""
    return (
        *(
            NodeSpec(f"kwok-ondemand-{i}", {"instance-type": "ondemand"}, (), _CPU_NODE)
            for i in range(2)
        ),
        *(
            NodeSpec(f"kwok-spot-{i}", {"instance-type": "spot"}, (SPOT_TAINT,), _CPU_NODE)
            for i in range(2)
        ),
        NodeSpec(
            "kwok-gpu-0",
            {"cloud.provider.com/accelerator": "nvidia-a100"},
            (),
            {**_CPU_NODE, "cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "8"},
        ),
    )


def is_usable(node: dict[str, Any]) -> bool:
    """Pure: Ready=True and the not-ready taint removed by the lifecycle controller."""
    conditions = node.get("status", {}).get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    taints = node.get("spec", {}).get("taints") or []
    not_ready = any(t.get("key", "").startswith("node.kubernetes.io/") for t in taints)
    return ready and not not_ready
