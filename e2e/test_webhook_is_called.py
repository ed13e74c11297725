"""Proof that the API server calls an admission webhook served on 127.0.0.1.

A tiny aiohttp server with a certificate for IP 127.0.0.1 (signed by a CA
made here) is registered by ``clientConfig.url`` — the way kuota's real
webhook is registered on the local cluster — and labels Jobs on create.
The registration is scoped to this test's namespace so nothing else waits
on it.
"""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from aiohttp import web
from kubernetes_asyncio import client

from certs.generate import issue, new_ca

from .fixtures import ClusterHandle
from .waiting import eventually

pytestmark = pytest.mark.cluster

LABEL = "e2e.kuota.test/mutated"
CALLS = web.AppKey("calls", list)


async def label_jobs(request: web.Request) -> web.Response:
    review = await request.json()
    job = review["request"]["object"]
    labelled = json.loads(json.dumps(job))
    labelled.setdefault("metadata", {}).setdefault("labels", {})[LABEL] = "true"
    patch = jsonpatch.make_patch(job, labelled).to_string()
    request.app[CALLS].append(review["request"]["uid"])
    return web.json_response(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {
                "uid": review["request"]["uid"],
                "allowed": True,
                "patchType": "JSONPatch",
                "patch": base64.b64encode(patch.encode()).decode(),
            },
        }
    )


@pytest.fixture
async def tls_webhook() -> AsyncIterator[tuple[str, bytes, list[str]]]:
    """(url, CA PEM, list of request uids seen) for a webhook on 127.0.0.1."""
    ca = new_ca("e2e-webhook-ca")
    serving = issue(
        ca,
        common_name="127.0.0.1",
        ip_addresses=["127.0.0.1"],
        dns_names=["localhost"],
        server=True,
    )
    with tempfile.TemporaryDirectory() as scratch:
        cert, key = Path(scratch, "tls.crt"), Path(scratch, "tls.key")
        serving.write(cert, key)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(cert), str(key))
    app = web.Application()
    app[CALLS] = []
    app.router.add_post("/mutate", label_jobs)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"https://127.0.0.1:{port}/mutate", ca.cert_pem, app[CALLS]
    finally:
        await runner.cleanup()


def registration(name: str, url: str, ca_pem: bytes, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "label-jobs.e2e.kuota.test",
                "clientConfig": {"url": url, "caBundle": base64.b64encode(ca_pem).decode()},
                "rules": [
                    {
                        "apiGroups": ["batch"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["jobs"],
                    }
                ],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 5,
            }
        ],
    }


def suspended_job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            },
        },
    }


async def test_api_server_applies_a_local_webhooks_patch(
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    tls_webhook: tuple[str, bytes, list[str]],
) -> None:
    if not cluster.local:
        pytest.skip("an external cluster's API server cannot dial 127.0.0.1 of this machine")
    url, ca_pem, calls = tls_webhook
    admission = client.AdmissionregistrationV1Api(api)
    batch = client.BatchV1Api(api)
    config_name = f"e2e-label-jobs-{namespace}"
    await admission.create_mutating_webhook_configuration(
        registration(config_name, url, ca_pem, namespace)
    )
    try:

        async def dry_run_labels() -> dict[str, str]:
            job = await batch.create_namespaced_job(
                namespace, suspended_job("probe"), dry_run="All"
            )
            return job.metadata.labels or {}

        # The API server picks the registration up through an informer: poll.
        await eventually(
            dry_run_labels,
            lambda labels: labels.get(LABEL) == "true",
            timeout=30,
            what="the webhook's label on a dry-run Job",
        )

        await batch.create_namespaced_job(namespace, suspended_job("real"))
        stored = await batch.read_namespaced_job("real", namespace)
        assert stored.metadata.labels[LABEL] == "true"
        assert stored.spec.suspend is True
        assert len(calls) >= 2, "the webhook saw both the dry-run and the real create"
    finally:
        await admission.delete_mutating_webhook_configuration(config_name)
