"""How fast is ``kuota validate`` on a large manifest set?

Generates 10,000 objects of the kinds a platform repository holds (ClusterQueues
with two resource groups and a cohort, ResourceFlavors, LocalQueues and
Workloads, in equal parts), writes them to one multi-document file and times
the installed console script end to end (process start, YAML load,
conversion, defaulting, validation, output), best of 3 runs.  Target:
under 5 seconds.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

OBJECTS = 10_000
RUNS = 3


def cluster_queue(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": f"cq-{i}"},
        "spec": {
            "cohortName": f"cohort-{i % 100}",
            "namespaceSelector": {},
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": flavor,
                            "resources": [
                                {"name": "cpu", "nominalQuota": "9", "borrowingLimit": "3"},
                                {"name": "memory", "nominalQuota": "36Gi", "lendingLimit": "12Gi"},
                            ],
                        }
                        for flavor in ("on-demand", "spot")
                    ],
                },
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}],
                        }
                    ],
                },
            ],
        },
    }


def resource_flavor(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": f"rf-{i}"},
        "spec": {
            "nodeLabels": {"instance-type": "spot"},
            "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
        },
    }


def local_queue(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": f"lq-{i}", "namespace": f"team-{i % 50}"},
        "spec": {"clusterQueue": f"cq-{i}"},
    }


def workload(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": f"wl-{i}", "namespace": f"team-{i % 50}"},
        "spec": {
            "queueName": f"lq-{i}",
            "priority": i % 10,
            "podSets": [
                {
                    "name": "main",
                    "count": 4,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "busybox",
                                    "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
                                }
                            ],
                        }
                    },
                }
            ],
        },
    }


MAKERS = (cluster_queue, resource_flavor, local_queue, workload)


def main() -> int:
    objects = [MAKERS[i % len(MAKERS)](i) for i in range(OBJECTS)]
    script = Path(sys.executable).with_name("kuota")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "objects.yaml"
        path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
        size_mb = path.stat().st_size / 1e6
        timings = []
        for _ in range(RUNS):
            started = time.perf_counter()
            done = subprocess.run(
                [str(script), "validate", str(path)], capture_output=True, text=True
            )
            timings.append(time.perf_counter() - started)
            if done.returncode != 0:
                print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
                return 1
    best = min(timings)
    print(
        f"{'benchmark':<34} {'objects':>8} {'MB':>6} {'best s':>8} {'objects/s':>10} {'target':>8}"
    )
    print(
        f"{'kuota validate (end to end)':<34} {OBJECTS:>8} {size_mb:>6.1f} {best:>8.2f} "
        f"{OBJECTS / best:>10.0f} {'< 5 s':>8}"
    )
    return 0 if best < 5.0 else 1


if __name__ == "__main__":
    sys.exit(main())
