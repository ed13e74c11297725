"""The API server keeps reaching kuota's webhook while others hold connections open.

The webhook holds at most ``--max-connections`` (1,024)
connections and, beyond that, closes the one quiet the longest.  Here 1,500
idle TLS connections are opened to the session's webhook from this process
and kept open, and queued Jobs are then created through the real API server,
20 at once: every one must be answered by kuota (stored suspended), none
refused because the webhook could not be reached.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import resource
import socket
import ssl
from collections.abc import Iterator

import pytest
from kubernetes_asyncio import client

from e2e.kuota_install import KuotaWebhook
from webhook.settings import DEFAULT_MAX_CONNECTIONS

pytestmark = pytest.mark.cluster
QUEUE = "kueue.x-k8s.io/queue-name"
IDLE_CONNECTIONS = 1500
MAX_CONNECTIONS = DEFAULT_MAX_CONNECTIONS  # as the session starts it


def open_idle(webhook: KuotaWebhook, context: ssl.SSLContext) -> socket.socket:
    with socket.create_connection(("127.0.0.1", webhook.port), timeout=30) as plain:
        secured = context.wrap_socket(plain, server_hostname="127.0.0.1")
        held = socket.socket(fileno=os.dup(secured.fileno()))
        secured.close()
        return held


def metric(webhook: KuotaWebhook, context: ssl.SSLContext, name: str) -> float:
    status, text = webhook.metrics()
    assert status == 200, text
    found = re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    assert found, f"{name} not exposed"
    return sum(float(value) for value in found)  # over its labels


@pytest.fixture
def idle_connections(kuota: KuotaWebhook) -> Iterator[tuple[ssl.SSLContext, int]]:
    """``IDLE_CONNECTIONS`` idle TLS connections to the webhook; (client context, count held)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (max(soft, min(hard, IDLE_CONNECTIONS + 2000)), hard)
    )
    context = ssl.create_default_context(cafile=str(kuota.cert_dir / "ca.crt"))
    held: list[socket.socket] = []
    try:
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            for future in [pool.submit(open_idle, kuota, context) for _ in range(IDLE_CONNECTIONS)]:
                try:
                    held.append(future.result())
                except OSError:
                    pass  # closed by the webhook mid-handshake, to stay within its bound
        assert len(held) >= IDLE_CONNECTIONS * 0.95
        yield context, len(held)
    finally:
        for item in held:
            item.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_queued_jobs_are_answered_while_more_connections_than_the_bound_sit_idle(
    kuota: KuotaWebhook,
    idle_connections: tuple[ssl.SSLContext, int],
    api: client.ApiClient,
    namespace: str,
) -> None:
    context, held = idle_connections
    assert metric(kuota, context, "kuota_webhook_connections") <= MAX_CONNECTIONS + 1
    assert metric(kuota, context, "kuota_webhook_connections_evicted_total") >= (
        held - MAX_CONNECTIONS
    ), "the flood was held within the bound by closing the quietest connections"
    batch = client.BatchV1Api(api)
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"labels": {QUEUE: "user-queue"}},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            }
        },
    }
    created = await asyncio.gather(
        *(
            batch.create_namespaced_job(
                namespace, {**body, "metadata": {**body["metadata"], "name": f"burst-{index}"}}
            )
            for index in range(20)
        )
    )
    assert [job.spec.suspend for job in created] == [True] * 20, "kuota answered every one"
