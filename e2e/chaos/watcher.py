"""The invariant watcher: its own watches on Workloads, Jobs, Pods and ClusterQueues, each event
handed to :class:`~e2e.chaos.invariants.InvariantChecker` as it arrives.

The watches are list + watch informers with their own connection (they resume
after a broken connection, list again after 410 Gone): they outlive an API
server restart or a frozen etcd, as the scenarios need.  Each informer's
progress (the last resourceVersion it delivered, bookmarks included) is
passed on after every event and twice a second, so the Job-versus-Workload
check can run as far as both watches have delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

from kubernetes_asyncio import client

from scheduler.api.objects import resource_version
from scheduler.kube.informer import Backoff, Event, Informer
from scheduler.kube.source import KubeSource, Resource

from .invariants import CLUSTER_QUEUE, JOB, POD, WORKLOAD, InvariantChecker

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
RESOURCES = {
    WORKLOAD: Resource(GROUP, VERSION, "workloads"),
    JOB: Resource("batch", "v1", "jobs"),
    POD: Resource("", "v1", "pods"),
    CLUSTER_QUEUE: Resource(GROUP, VERSION, "clusterqueues"),
}


class InvariantWatcher:
    def __init__(self, checker: InvariantChecker, informers: dict[str, Informer]) -> None:
        self.checker = checker
        self.informers = informers

    def relists(self) -> int:
        """Lists after the first: each one followed a watch that could not resume (410)."""
        return sum(max(0, informer.lists - 1) for informer in self.informers.values())

    def _advance(self) -> None:
        for stream, informer in self.informers.items():
            self.checker.advance(stream, informer.version)


def _handler(checker: InvariantChecker, stream: str, informers: dict[str, Informer]) -> Any:
    def handle(event: Event) -> None:
        # During a watch the informer's version is this event's (set just before the
        # handler); during a list it is still the one before the list (None at first).
        informer = informers[stream]
        relisted = informer.version != resource_version(event.object)
        checker.observe(stream, event.type, event.object, relisted=relisted, at=time.monotonic())
        if not relisted:
            checker.advance(stream, informer.version)

    return handle


@contextlib.asynccontextmanager
async def watching(
    api: client.ApiClient,
    namespace: str,
    cluster_queues: Iterable[str],
    *,
    sync_timeout: float = 60,
) -> AsyncIterator[InvariantWatcher]:
    """Watch until the block ends; the four informers are synced when it starts."""
    checker = InvariantChecker(namespace, cluster_queues)
    informers: dict[str, Informer] = {}
    for stream, resource in RESOURCES.items():
        informers[stream] = Informer(
            f"chaos-{stream}",
            KubeSource(api, resource, watch_timeout_seconds=60),
            _handler(checker, stream, informers),
            backoff=Backoff(maximum=2.0),  # back within 2 s of the API server
        )
    watcher = InvariantWatcher(checker, informers)

    async def tick() -> None:
        while True:  # cancelled at the end of the block
            await asyncio.sleep(0.5)
            watcher._advance()

    tasks = [asyncio.create_task(informer.run()) for informer in informers.values()]
    tasks.append(asyncio.create_task(tick()))
    try:
        await asyncio.wait_for(
            asyncio.gather(*(informer.synced.wait() for informer in informers.values())),
            timeout=sync_timeout,
        )
        yield watcher
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        watcher._advance()
