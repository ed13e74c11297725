"""Visibility API benchmark: pages of 1,000 from a ClusterQueue of 50,000 pending Workloads.

Run with ``python -m benchmarks.bench_visibility`` (about a minute).  Two
processes, as in a cluster:

* the *scheduler* (a child process): kuota's engine holding one ClusterQueue
  (100 CPUs of quota, 20 LocalQueues in 20 namespaces) with 50,000 pending
  Workloads (three priorities), the visibility server of ``scheduler.visibility``
  on 127.0.0.1 over TLS, and meanwhile the scheduler's turns in the same event
  loop: every 0.1 s two admitted Workloads finish, two new ones arrive, and an
  engine cycle runs (admitting, parking heads: the queue changes every turn).
  Its heap is settled once loaded, as the scheduler settles it once its
  informers have listed (``scheduler.service.heap``);
* the *client* (this process): the aggregator's part, one keep-alive TLS
  connection with the front-proxy client certificate and the caller's headers,
  asking pages of 1,000 at random offsets, one after the other.

Measured: the time from sending a request to having its whole answer
(TLS, HTTP, authentication, the RBAC decision, the page, JSON), p50/p99/max,
for ClusterQueue pages and LocalQueue pages.  Not measured: the API server's
own hop (the aggregator proxying the request) and the SubjectAccessReview
round trip, answered in-process here; a real review is made once per 2 s per
caller and question (``scheduler.visibility.access``).  Target: p99 < 100 ms
on 2 cores while the scheduler runs.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks.rows import print_rows
from certs.generate import issue, new_ca
from scheduler.core.engine import Engine
from scheduler.service import heap
from scheduler.visibility.server import VisibilityServer, VisibilitySettings
from scheduler.visibility.source import SchedulerSource
from tests.builders import T0, cluster_queue, flavor_quotas, local_queue, resource_flavor, workload

PENDING = 50_000
LOCAL_QUEUES = 20
QUOTA_CPUS = 100
PAGE = 1_000
REQUESTS = 300
LQ_REQUESTS = 300
WARMUP = 20
TURN_SECONDS = 0.1
CHURN = 2
PROXY_NAME = "front-proxy-client"


# --- the scheduler process ----------------------------------------------------------------


class FakeApiServer:
    """The front-proxy settings and an RBAC that allows everything, counting its reviews."""

    def __init__(self, proxy_ca_pem: str) -> None:
        self.proxy_ca_pem = proxy_ca_pem
        self.reviews = 0

    async def get(self, path: str, **_: Any) -> dict[str, Any]:
        return {
            "data": {
                "requestheader-client-ca-file": self.proxy_ca_pem,
                "requestheader-allowed-names": json.dumps([PROXY_NAME]),
                "requestheader-username-headers": json.dumps(["X-Remote-User"]),
                "requestheader-group-headers": json.dumps(["X-Remote-Group"]),
            }
        }

    async def create(self, path: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.reviews += 1
        return {"status": {"allowed": True}}


class Cluster:
    """The engine, the stored Workloads, and the churn of a running scheduler."""

    def __init__(self) -> None:
        self.engine = Engine()
        self.stored: dict[str, dict[str, Any]] = {}
        self.template = workload("template").pod_set(cpu="1").model()
        self.created = 0
        self.engine.apply(resource_flavor("default").model())
        self.engine.apply(
            cluster_queue("big")
            .resource_group(flavor_quotas("default", cpu=str(QUOTA_CPUS)))
            .model()
        )
        for index in range(LOCAL_QUEUES):
            self.engine.apply(local_queue("lq", f"team-{index}").cluster_queue("big").model())

    def submit(self, count: int) -> None:
        for _ in range(count):
            index = self.created
            self.created += 1
            namespace, name = f"team-{index % LOCAL_QUEUES}", f"job-w{index}-1a2b3"
            meta = dataclasses.replace(
                self.template.metadata,
                name=name,
                namespace=namespace,
                uid=f"u{index}",
                creation_timestamp=T0 + timedelta(seconds=index),
            )
            spec = dataclasses.replace(self.template.spec, queue_name="lq", priority=index % 3)
            self.engine.apply(dataclasses.replace(self.template, metadata=meta, spec=spec))
            self.stored[f"{namespace}/{name}"] = {
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "creationTimestamp": (T0 + timedelta(seconds=index)).strftime(
                        "%Y-%m-%dT%H:%M:%SZ"
                    ),
                    "ownerReferences": [
                        {
                            "apiVersion": "batch/v1",
                            "kind": "Job",
                            "name": f"w{index}",
                            "uid": f"job-u{index}",
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                }
            }

    def turn(self, rng: random.Random) -> float:
        """Two admitted Workloads finish, two arrive, one engine cycle: its seconds."""
        holding = sorted(key for keys in self.engine.cache.admitted.values() for key in keys)
        for key in rng.sample(holding, min(CHURN, len(holding))):
            self.engine.finish(key)
            self.engine.remove("Workload", *reversed(key.split("/", 1)))
            self.stored.pop(key, None)
        self.submit(CHURN)
        started = time.perf_counter()
        self.engine.cycle(T0 + timedelta(seconds=self.created))
        return time.perf_counter() - started


async def serve(directory: Path) -> None:
    """The scheduler process: engine, churning turns and the visibility server, until SIGTERM."""
    cluster = Cluster()
    started = time.perf_counter()
    cluster.submit(PENDING + QUOTA_CPUS)
    apply_seconds = time.perf_counter() - started
    heap.settle("loaded")  # as the scheduler does once its informers have listed
    rng = random.Random(7)
    cycle_seconds = [cluster.turn(rng)]
    api = FakeApiServer((directory / "proxy-ca.crt").read_text())
    server = VisibilityServer(
        SchedulerSource(lambda: cluster.engine, lambda: cluster.stored),
        api,  # type: ignore[arg-type]
        VisibilitySettings(host="127.0.0.1", port=0, cert_dir=directory),
    )
    serving = asyncio.create_task(server.run())
    await server.serving.wait()
    stopping = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopping.set)
    print(json.dumps({"port": server.port}), flush=True)
    while not stopping.is_set():
        cycle_seconds.append(cluster.turn(rng))
        await asyncio.sleep(TURN_SECONDS)
    serving.cancel()
    await asyncio.gather(serving, return_exceptions=True)
    queue = cluster.engine.view.pending_queue("big")
    print(
        json.dumps(
            {
                "apply_seconds": apply_seconds,
                "turns": len(cycle_seconds),
                "cycle_mean": statistics.fmean(cycle_seconds),
                "cycle_max": max(cycle_seconds),
                "pending": len(queue) if queue is not None else 0,
                "reviews": api.reviews,
            }
        ),
        flush=True,
    )


# --- the client ---------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure(port: int, directory: Path) -> dict[str, list[float]]:
    context = ssl.create_default_context(cafile=str(directory / "ca.crt"))
    context.check_hostname = False
    context.load_cert_chain(directory / "proxy.crt", directory / "proxy.key")
    headers = {"X-Remote-User": "bench", "X-Remote-Group": "system:authenticated"}
    base = f"https://127.0.0.1:{port}/apis/visibility.kueue.x-k8s.io/v1beta2"
    rng = random.Random(11)
    import aiohttp  # the client side only

    timings: dict[str, list[float]] = {"clusterqueue": [], "localqueue": []}
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(ssl=context, limit=1)
    ) as session:

        async def page(path: str) -> tuple[float, int]:
            started = time.perf_counter()
            async with session.get(base + path, headers=headers) as reply:
                body = await reply.read()
                assert reply.status == 200, body[:300]
            return time.perf_counter() - started, len(json.loads(body)["items"])

        for _ in range(WARMUP):
            await page(f"/clusterqueues/big/pendingworkloads?limit={PAGE}")
        for _ in range(REQUESTS):
            offset = rng.randrange(0, PENDING - PAGE)
            seconds, items = await page(
                f"/clusterqueues/big/pendingworkloads?limit={PAGE}&offset={offset}"
            )
            assert items == PAGE, items
            timings["clusterqueue"].append(seconds)
        for _ in range(LQ_REQUESTS):
            team = rng.randrange(LOCAL_QUEUES)
            offset = rng.randrange(0, PENDING // LOCAL_QUEUES - PAGE)
            seconds, items = await page(
                f"/namespaces/team-{team}/localqueues/lq/pendingworkloads"
                f"?limit={PAGE}&offset={offset}"
            )
            assert items == PAGE, items
            timings["localqueue"].append(seconds)
    return timings


def write_certificates(directory: Path) -> None:
    serving_ca = new_ca("bench-serving")
    serving_ca_pem = serving_ca.cert_pem
    (directory / "ca.crt").write_bytes(serving_ca_pem)
    issue(serving_ca, common_name="visibility", ip_addresses=["127.0.0.1"], server=True).write(
        directory / "tls.crt", directory / "tls.key"
    )
    proxy_ca = new_ca("bench-front-proxy")
    (directory / "proxy-ca.crt").write_bytes(proxy_ca.cert_pem)
    issue(proxy_ca, common_name=PROXY_NAME, client=True).write(
        directory / "proxy.crt", directory / "proxy.key"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_visibility")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(serve(args.serve))
        return
    with tempfile.TemporaryDirectory(prefix="kuota-bench-visibility-") as scratch:
        directory = Path(scratch)
        write_certificates(directory)
        child = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.bench_visibility", "--serve", str(directory)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        try:
            assert child.stdout is not None
            port = json.loads(child.stdout.readline())["port"]
            timings = asyncio.run(measure(port, directory))
        finally:
            child.send_signal(signal.SIGTERM)
            out, _ = child.communicate(timeout=60)
        server = json.loads(out.strip().splitlines()[-1])
    load = os.getloadavg()
    rows = [
        (
            "pending workloads in the ClusterQueue",
            f"{server['pending']:,} ({LOCAL_QUEUES} LocalQueues)",
        ),
        ("applied into the engine", f"{PENDING + QUOTA_CPUS:,} in {server['apply_seconds']:.1f} s"),
        (
            "scheduler turns meanwhile (cycle mean / max)",
            f"{server['turns']} ({1000 * server['cycle_mean']:.1f} ms / "
            f"{1000 * server['cycle_max']:.1f} ms)",
        ),
        ("access reviews made", str(server["reviews"])),
    ]
    for kind, values in timings.items():
        rows.append(
            (
                f"{kind} page of {PAGE:,} p50 / p99 / max",
                f"{1000 * percentile(values, 0.5):.1f} / {1000 * percentile(values, 0.99):.1f}"
                f" / {1000 * max(values):.1f} ms ({len(values)} requests)",
            )
        )
    rows.append(("load average (1, 5, 15 min)", " ".join(f"{value:.2f}" for value in load)))
    print_rows(rows)


if __name__ == "__main__":
    main()
