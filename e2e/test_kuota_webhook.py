"""kuota's webhook on a real API server.

The webhook runs as a local process on 127.0.0.1, registered by URL (the
``kuota`` session fixture, the same installation as ``python -m e2e.cluster
up --kuota``).  What a user would check:

* a queued Job is stored suspended and no pod ever appears; a server-side
  dry run answers the same and creates nothing;
* a Job without a queue name runs to completion untouched;
* only kuota's scheduler may unsuspend a queued Job;
* ``kubectl apply`` of an invalid ClusterQueue fails with the message
  ``kuota validate`` prints, naming the field;
* every seed example applies in its own API version and reads back both as
  ``v1beta2`` and as the version it was written in (the ``v1alpha1`` and
  ``v1alpha2`` ones with those versions served, as
  ``crds.servedLegacyVersions: [v1alpha1, v1alpha2, v1beta1]`` does: by
  default a cluster serves only ``v1beta2`` and ``v1beta1``);
* with the webhook process killed, queued Jobs are refused while unqueued
  Jobs still run.
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import KuotaWebhook, wait_ready
from scheduler.api.crds import load_crds
from scheduler.api.pipeline import review
from scheduler.api.validation.render import admission_status
from tests.api.seed_examples import documents

from .fixtures import ClusterHandle
from .test_crds_on_cluster import same_value
from .waiting import eventually

pytestmark = pytest.mark.cluster

GROUP = "kueue.x-k8s.io"
QUEUE = "kueue.x-k8s.io/queue-name"
SCHEDULER = "system:serviceaccount:kueue-system:kuota-scheduler"
PLURALS = {crd["spec"]["names"]["kind"]: crd["spec"]["names"]["plural"] for crd in load_crds()}
NAMESPACED = {
    crd["spec"]["names"]["kind"] for crd in load_crds() if crd["spec"]["scope"] == "Namespaced"
}
VERSIONS = ("v1alpha1", "v1alpha2", "v1beta2")
SERVED_WHEN_ASKED = {f"{GROUP}/v1alpha1", f"{GROUP}/v1alpha2"}
SEEDS = [doc for doc in documents() if doc.api_version in {f"{GROUP}/{v}" for v in VERSIONS}]
VALID_SEEDS = [doc for doc in SEEDS if review(doc.raw, default_namespace="default").valid]
INVALID_SEEDS = [doc for doc in SEEDS if not review(doc.raw, default_namespace="default").valid]

INVALID_CLUSTER_QUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team-a
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 9
      - name: memory
        nominalQuota: -36Gi
"""


def kubectl_binary() -> Path:
    return ToolPaths.resolve(build_if_missing=False).binary("kubectl")


def run_kubectl(
    cluster: ClusterHandle, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kubectl_binary()), "--kubeconfig", str(cluster.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def job(name: str, *, queue: str | None = None, suspend: bool | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE: queue} if queue else {}},
        "spec": {
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "1s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                },
            }
        },
    }
    if suspend is not None:
        body["spec"]["suspend"] = suspend
    return body


async def pods_of(api: client.ApiClient, namespace: str, name: str) -> list[client.V1Pod]:
    listed = await client.CoreV1Api(api).list_namespaced_pod(
        namespace, label_selector=f"job-name={name}"
    )
    return list(listed.items)


async def completes(api: client.ApiClient, namespace: str, name: str) -> None:
    batch = client.BatchV1Api(api)
    await eventually(
        lambda: batch.read_namespaced_job(name, namespace),
        lambda j: any(
            c.type == "Complete" and c.status == "True" for c in (j.status.conditions or [])
        ),
        timeout=90,
        what=f"Job {name} Complete",
    )


async def test_a_queued_job_is_created_suspended_and_no_pod_appears(
    kuota: KuotaWebhook, api: client.ApiClient, namespace: str
) -> None:
    batch = client.BatchV1Api(api)
    dry = await batch.create_namespaced_job(
        namespace, job("dry", queue="user-queue"), dry_run="All"
    )
    assert dry.spec.suspend is True
    await batch.create_namespaced_job(namespace, job("queued", queue="user-queue", suspend=False))
    stored = await batch.read_namespaced_job("queued", namespace)
    assert stored.spec.suspend is True
    assert stored.metadata.labels[QUEUE] == "user-queue"
    for _ in range(6):  # the job controller acts within milliseconds; watch it for three seconds
        assert await pods_of(api, namespace, "queued") == []
        await asyncio.sleep(0.5)
    assert [j.metadata.name for j in (await batch.list_namespaced_job(namespace)).items] == [
        "queued"
    ], "dry run created nothing"


async def test_an_unqueued_job_runs_untouched(
    kuota: KuotaWebhook, api: client.ApiClient, namespace: str
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("plain"))
    stored = await batch.read_namespaced_job("plain", namespace)
    assert stored.spec.suspend is False
    assert QUEUE not in (stored.metadata.labels or {})
    await completes(api, namespace, "plain")


async def test_only_kuotas_scheduler_unsuspends_a_queued_job(
    cluster: ClusterHandle, kuota: KuotaWebhook, api: client.ApiClient, namespace: str
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("held", queue="user-queue"))
    refused = run_kubectl(
        cluster,
        "-n",
        namespace,
        "patch",
        "job",
        "held",
        "--type=merge",
        "-p",
        '{"spec":{"suspend":false}}',
    )
    assert refused.returncode != 0
    assert (
        "Forbidden" in refused.stderr
        and "spec.suspend: a queued job can be unsuspended only by kuota's scheduler"
        in refused.stderr
    ), refused.stderr
    assert (await batch.read_namespaced_job("held", namespace)).spec.suspend is True
    granted = run_kubectl(
        cluster,
        "-n",
        namespace,
        "create",
        "rolebinding",
        "scheduler-edits-jobs",
        "--clusterrole=edit",
        f"--user={SCHEDULER}",
    )
    assert granted.returncode == 0, granted.stderr
    by_scheduler = run_kubectl(
        cluster,
        "-n",
        namespace,
        f"--as={SCHEDULER}",
        "patch",
        "job",
        "held",
        "--type=merge",
        "-p",
        '{"spec":{"suspend":false}}',
        "-o",
        "json",
    )
    assert by_scheduler.returncode == 0, by_scheduler.stderr
    # The webhook let the scheduler's identity through.  (Waiting for the Job to run
    # would be wrong: when kuota's scheduler runs in the session it suspends again a
    # queued Job that runs without an admission, as it should.)
    assert json.loads(by_scheduler.stdout)["spec"]["suspend"] is False


def test_kubectl_apply_of_an_invalid_cluster_queue_shows_kuotas_message(
    cluster: ClusterHandle, kuota: KuotaWebhook
) -> None:
    applied = run_kubectl(cluster, "apply", "-f", "-", stdin=INVALID_CLUSTER_QUEUE)
    assert applied.returncode == 1
    expected = admission_status(review(yaml.safe_load(INVALID_CLUSTER_QUEUE)).errors)["message"]
    assert expected.startswith("spec.resourceGroups[0].flavors[0].resources[1].nominalQuota: ")
    assert applied.stderr.strip().endswith(
        f'admission webhook "clusterqueue.validate.kuota.io" denied the request: {expected}'
    ), applied.stderr
    assert run_kubectl(cluster, "get", "clusterqueue", "team-a").returncode != 0, (
        "nothing was stored"
    )


def _named(seed_raw: dict[str, Any], namespace: str) -> dict[str, Any]:
    body = copy.deepcopy(seed_raw)
    body["metadata"]["name"] = f"{body['metadata']['name']}-{namespace}"[:63].rstrip("-")
    if body["kind"] in NAMESPACED:
        body["metadata"]["namespace"] = namespace
    return body


def _get(cluster: ClusterHandle, body: dict[str, Any], version: str) -> dict[str, Any]:
    scope = ["-n", body["metadata"]["namespace"]] if body["kind"] in NAMESPACED else []
    got = run_kubectl(
        cluster,
        *scope,
        "get",
        f"{PLURALS[body['kind']]}.{version}.{GROUP}",
        body["metadata"]["name"],
        "-o",
        "json",
    )
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


def _serve_its_version(seed: Any, request: pytest.FixtureRequest) -> None:
    """An alpha seed needs its version served (the chart's crds.servedLegacyVersions)."""
    if seed.api_version in SERVED_WHEN_ASKED:
        request.getfixturevalue("legacy_versions_served")


@pytest.mark.parametrize(
    "seed", VALID_SEEDS, ids=lambda s: f"{s.api_version.split('/')[1]}:{s.kind}:{s.line}"
)
def test_seed_applies_in_its_own_version_and_reads_back_in_both(
    seed: Any,
    cluster: ClusterHandle,
    kuota: KuotaWebhook,
    namespace: str,
    request: pytest.FixtureRequest,
) -> None:
    _serve_its_version(seed, request)
    body = _named(seed.raw, namespace)
    applied = run_kubectl(cluster, "apply", "-f", "-", stdin=json.dumps(body))
    assert applied.returncode == 0, applied.stderr
    try:
        _reads_back(seed, cluster, body)
    finally:
        # Cluster-scoped seeds outlive the test namespace: a left-over ClusterQueue
        # would keep the flavors it names (e.g. "default-flavor") in use for the
        # rest of the session, and their deletion waiting, in other tests.
        run_kubectl(cluster, "delete", "-f", "-", "--wait=false", stdin=json.dumps(body))


def _reads_back(seed: Any, cluster: ClusterHandle, body: dict[str, Any]) -> None:
    version = seed.api_version.split("/")[1]
    hub = _get(cluster, body, "v1beta2")
    assert hub["apiVersion"] == f"{GROUP}/v1beta2"
    assert review(hub, operation="UPDATE", old=hub).valid, "the stored v1beta2 object is valid"
    original = _get(cluster, body, version)
    assert original["apiVersion"] == seed.api_version
    wrote = {
        key: value for key, value in body.items() if key not in ("apiVersion", "metadata", "status")
    }
    assert same_value(wrote, original), (
        f"read back in {version} lost what the seed wrote: {json.dumps(original)[:2000]}"
    )


@pytest.mark.parametrize(
    "seed", INVALID_SEEDS, ids=lambda s: f"{s.api_version.split('/')[1]}:{s.kind}:{s.line}"
)
def test_an_invalid_seed_is_refused_with_the_message_of_kuota_validate(
    seed: Any,
    cluster: ClusterHandle,
    kuota: KuotaWebhook,
    namespace: str,
    request: pytest.FixtureRequest,
) -> None:
    _serve_its_version(seed, request)
    body = _named(seed.raw, namespace)
    applied = run_kubectl(cluster, "apply", "-f", "-", stdin=json.dumps(body))
    assert applied.returncode != 0
    errors = review(body).errors
    status = admission_status(errors)
    if status["code"] == 403:  # kubectl prints a Forbidden denial's message as one line
        assert f"denied the request: {status['message']}" in applied.stderr, applied.stderr
    else:  # and an Invalid one as its causes ("<field>: <message>", one "* " line each if several)
        assert "The request is invalid" in applied.stderr, applied.stderr
        for item in errors:
            assert item.render() in applied.stderr, applied.stderr


async def test_with_the_webhook_killed_queued_jobs_are_refused_and_unqueued_jobs_run(
    cluster: ClusterHandle, kuota: KuotaWebhook, api: client.ApiClient, namespace: str
) -> None:
    batch = client.BatchV1Api(api)
    kuota.kill()
    try:
        assert not kuota.alive()
        with pytest.raises(ApiException) as refused:
            await batch.create_namespaced_job(
                namespace, job("queued", queue="user-queue", suspend=False)
            )
        assert "failed calling webhook" in str(refused.value.body), refused.value.body
        assert (await batch.list_namespaced_job(namespace)).items == [], (
            "the queued Job was not let through"
        )
        await batch.create_namespaced_job(namespace, job("plain"))
        await completes(api, namespace, "plain")
    finally:
        kuota.restart()
        wait_ready(kuota)
    await eventually(
        lambda: batch.create_namespaced_job(namespace, job("after", queue="q"), dry_run="All"),
        lambda created: created.spec.suspend is True,
        timeout=30,
        what="the webhook serving again",
    )
