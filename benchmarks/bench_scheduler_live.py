"""kuota on a real (local) cluster: API writes per admitted Job, and the time
from Job creation to unsuspend.

Starts a throw-away local control plane with kuota installed (webhook and one
scheduler replica, as ``up --kuota`` does), submits 50 queued Jobs that all
fit, watches when each becomes unsuspended, and reads the scheduler's own
write counters (``kuota_api_write_duration_seconds_count``) before and after.
Bounded: 50 Jobs, at most ~2 minutes.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from kubernetes_asyncio import client, config

from e2e.cluster.controlplane import ControlPlane
from e2e.cluster.pki import ClusterPki
from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import install_kuota, uninstall_kuota
from e2e.kuota_scheduler import start_schedulers

JOBS = 50
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
WRITE_COUNT = re.compile(
    r'^kuota_api_write_duration_seconds_count\{resource="([^"]+)",verb="([^"]+)"\} (\S+)$', re.M
)


def writes(metrics: str) -> dict[str, float]:
    return {
        f"{verb} {resource}": float(value) for resource, verb, value in WRITE_COUNT.findall(metrics)
    }


def job(index: int) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"bench-{index}", "labels": {"kueue.x-k8s.io/queue-name": "bench"}},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "1s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {"instance-type": "ondemand"},
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "100m"}},
                        }
                    ],
                },
            },
        },
    }


async def measure(
    kubeconfig: Path, metrics_of: object
) -> tuple[list[float], dict[str, float], float]:
    configuration = client.Configuration()
    await config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    async with client.ApiClient(configuration=configuration) as api:
        custom, batch, core = (
            client.CustomObjectsApi(api),
            client.BatchV1Api(api),
            client.CoreV1Api(api),
        )
        await core.create_namespace({"metadata": {"name": "bench"}})
        await custom.create_cluster_custom_object(
            GROUP,
            VERSION,
            "resourceflavors",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "ResourceFlavor",
                "metadata": {"name": "ondemand"},
                "spec": {"nodeLabels": {"instance-type": "ondemand"}},
            },
        )
        await custom.create_cluster_custom_object(
            GROUP,
            VERSION,
            "clusterqueues",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "ClusterQueue",
                "metadata": {"name": "bench"},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [
                                {
                                    "name": "ondemand",
                                    "resources": [{"name": "cpu", "nominalQuota": "100"}],
                                }
                            ],
                        }
                    ],
                },
            },
        )
        await custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            "bench",
            "localqueues",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "LocalQueue",
                "metadata": {"name": "bench"},
                "spec": {"clusterQueue": "bench"},
            },
        )
        await asyncio.sleep(2)
        before = writes(metrics_of())  # type: ignore[operator]
        created: dict[str, float] = {}
        started: dict[str, float] = {}
        for index in range(JOBS):
            created[f"bench-{index}"] = time.monotonic()
            await batch.create_namespaced_job("bench", job(index))
        deadline = time.monotonic() + 120
        while len(started) < JOBS and time.monotonic() < deadline:
            for item in (await batch.list_namespaced_job("bench")).items:
                if item.spec.suspend is False and item.metadata.name not in started:
                    started[item.metadata.name] = time.monotonic()
            await asyncio.sleep(0.05)
        while (
            time.monotonic() < deadline
        ):  # let every Workload finish, so the finish writes count too
            listed = await custom.list_namespaced_custom_object(
                GROUP, VERSION, "bench", "workloads"
            )
            done = sum(
                1
                for wl in listed["items"]
                if any(
                    c["type"] == "Finished" and c["status"] == "True"
                    for c in wl.get("status", {}).get("conditions", [])
                )
            )
            if done == JOBS:
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(2)
        after = writes(metrics_of())  # type: ignore[operator]
        latencies = [started[name] - created[name] for name in started]
        delta = {key: after.get(key, 0) - before.get(key, 0) for key in after}
        return latencies, delta, float(len(started))


def main() -> int:
    tools = ToolPaths.resolve(build_if_missing=False)
    workdir = Path(tempfile.mkdtemp(prefix="kuota-bench-"))
    plane = ControlPlane("kuota-bench", tools=tools, workdir=workdir)
    info = plane.start()
    kubectl = tools.binary("kubectl")
    webhook = install_kuota(kubectl, info.kubeconfig, workdir)
    (replica,) = start_schedulers(
        kubectl, info.kubeconfig, ClusterPki(workdir / "pki"), info.server, workdir
    )
    try:
        latencies, delta, started = asyncio.run(
            measure(info.kubeconfig, lambda: replica.endpoint("/metrics")[1])
        )
    finally:
        replica.stop()
        uninstall_kuota(kubectl, info.kubeconfig, webhook)
        plane.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    object_writes = sum(value for key, value in delta.items() if not key.endswith(" events"))
    event_writes = sum(value for key, value in delta.items() if key.endswith(" events"))
    print(f"{'measure (50 queued Jobs that all fit, one scheduler replica)':<62} {'value':>10}")
    print(f"{'Jobs unsuspended':<62} {started:>10.0f}")
    print(f"{'creation -> unsuspend, p50 (s)':<62} {statistics.median(latencies):>10.3f}")
    print(f"{'creation -> unsuspend, max (s)':<62} {max(latencies):>10.3f}")
    print(
        f"{'API writes per Job, objects (create Workload, status, Job patch, finish)':<62} "
        f"{object_writes / JOBS:>10.2f}"
    )
    print(f"{'API writes per Job, Events':<62} {event_writes / JOBS:>10.2f}")
    for key in sorted(delta):
        print(f"  {key:<60} {delta[key]:>10.0f}")
    return 0 if started == JOBS else 1


if __name__ == "__main__":
    raise SystemExit(main())
