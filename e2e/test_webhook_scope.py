"""Which requests reach kuota's webhook at all, on a real API server.

A Job in a namespace kuota does not manage is not kuota's,
queue name or not (Kueue v0.19, ``ManagedJobsNamespaceSelectorAlwaysRespected``).
The registrations carry the rule as the ``namespaceSelector`` of every Job
entry, so the API server does not even call the webhook there; what the
webhook decides is what the stored Job shows right after ``create``; the
scheduler applies the same rule (no Workload for a Job outside), tested last.

* ``kueue-system`` (kuota's namespace) is never managed: a queued Job created
  there keeps ``suspend: false``;
* with the registrations rendered for ``managedJobsNamespaceSelector:
  {matchLabels: {kuota.io/e2e-managed: "yes"}}``, a queued Job in an
  unlabelled namespace keeps ``suspend: false`` and one in a labelled
  namespace is created suspended.

Issue 13: status writes reach the webhook only where Kueue v0.19.2 registers
a webhook: ``workloads/status`` yes, ``clusterqueues/status`` and
``localqueues/status`` no (counted in the webhook's own request metrics); of
the Workload status writes, not those of kuota's scheduler itself (its
identity), nor those that keep every field the rules read with valid
conditions (the match condition's CEL, run by the API server).
Creating a Workload asks the mutating webhook only when the Workload has a
``minCount`` (the one field that mutation may drop); a malformed one still
gets the schema's answer, not a match-condition error.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import KUOTA_NAMESPACE, KuotaWebhook, cluster_access, kubectl
from e2e.kuota_scheduler import scheduler_kubeconfig
from scheduler.kube.client import connect
from scheduler.kube.rest import Rest
from webhook.configurations import mutating_configuration, validating_configuration

from .fixtures import ClusterHandle
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
QUEUE = "kueue.x-k8s.io/queue-name"
MANAGED_LABEL = "kuota.io/e2e-managed"


def queued_job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE: "user-queue"}},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                }
            }
        },
    }


def register(
    cluster: ClusterHandle, webhook: KuotaWebhook, selector: dict[str, Any] | None
) -> None:
    """Apply kuota's two registrations as ``python -m e2e.cluster up --kuota`` does."""
    client_config = {"url": webhook.base_url, "caBundle": webhook.ca_bundle}
    options: dict[str, Any] = {"kuota_namespace": KUOTA_NAMESPACE}
    if selector is not None:
        options["managed_namespace_selector"] = selector
    manifests = [
        mutating_configuration(client_config, **options),
        validating_configuration(client_config, **options),
    ]
    binary: Path = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as manifest:
        yaml.safe_dump_all(manifests, manifest)
        manifest.flush()
        kubectl(
            binary, cluster.kubeconfig, "apply", "--server-side", "--force-conflicts",
            "--field-manager=kuota-e2e", "-f", manifest.name,
        )  # fmt: skip


async def suspended_on_create(api: client.ApiClient, namespace: str) -> bool:
    """What the webhooks decide for a queued Job created in ``namespace`` (dry run: no trace)."""
    created = await client.BatchV1Api(api).create_namespaced_job(
        namespace, queued_job(f"probe-{uuid.uuid4().hex[:6]}"), dry_run="All"
    )
    return bool(created.spec.suspend)


@pytest.fixture
async def kuota_namespace(api: client.ApiClient) -> AsyncIterator[str]:
    """kuota's own namespace (made if this session has not made it yet; left in place)."""
    core = client.CoreV1Api(api)
    try:
        await core.create_namespace(
            client.V1Namespace(metadata=client.V1ObjectMeta(name=KUOTA_NAMESPACE))
        )
    except ApiException as exists:
        if exists.status != 409:
            raise
    yield KUOTA_NAMESPACE


async def test_a_queued_job_in_kuotas_own_namespace_is_not_suspended(
    kuota: KuotaWebhook, api: client.ApiClient, namespace: str, kuota_namespace: str
) -> None:
    batch = client.BatchV1Api(api)
    name = f"not-kuotas-{uuid.uuid4().hex[:6]}"
    created = await batch.create_namespaced_job(kuota_namespace, queued_job(name))
    try:
        assert created.spec.suspend is False, "the webhook left it alone"
        assert created.metadata.labels[QUEUE] == "user-queue"
    finally:
        await batch.delete_namespaced_job(name, kuota_namespace, propagation_policy="Background")
    managed = await batch.create_namespaced_job(namespace, queued_job("queued"))
    assert managed.spec.suspend is True, "a queued Job in a managed namespace is suspended"


@pytest.fixture
def selected_namespaces(cluster: ClusterHandle, kuota: KuotaWebhook) -> Iterator[dict[str, Any]]:
    """The session's registrations with a managed-namespace selector, restored afterwards."""
    selector = {"matchLabels": {MANAGED_LABEL: "yes"}}
    register(cluster, kuota, selector)
    yield selector
    register(cluster, kuota, None)


async def test_the_managed_namespace_selector_scopes_queued_jobs(
    selected_namespaces: dict[str, Any], api: client.ApiClient, namespace: str
) -> None:
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    managed = f"managed-{namespace}"
    await core.create_namespace(
        client.V1Namespace(
            metadata=client.V1ObjectMeta(name=managed, labels={MANAGED_LABEL: "yes"})
        )
    )
    try:
        # Registrations reach the API server through an informer: wait until this one is in use.
        await eventually(
            lambda: suspended_on_create(api, namespace),
            lambda suspended: suspended is False,
            timeout=30,
            what="the API server using the registration with the selector",
        )
        outside = await batch.create_namespaced_job(namespace, queued_job("outside"))
        inside = await batch.create_namespaced_job(managed, queued_job("inside"))
        assert (outside.spec.suspend, inside.spec.suspend) == (False, True)
    finally:
        await core.delete_namespace(managed)


@pytest.fixture(autouse=True)
async def registrations_in_use(api: client.ApiClient, namespace: str) -> AsyncIterator[None]:
    """After every test here: the session's own registrations are in use again."""
    yield
    await eventually(
        lambda: suspended_on_create(api, namespace),
        lambda suspended: suspended is True,
        timeout=30,
        what="the session's registrations in use again",
    )


# -- status writes reach the webhook only where Kueue has one ------------------------------


def webhook_requests(webhook: KuotaWebhook, kind: str, action: str = "validate") -> float:
    """Requests answered on ``/<action>-kueue-x-k8s-io-v1beta2-<kind>``, every outcome."""
    status, text = webhook.metrics()
    assert status == 200, text
    endpoint = f"/{action}-kueue-x-k8s-io-v1beta2-{kind}"
    pattern = (
        rf'^kuota_webhook_requests_total{{endpoint="{re.escape(endpoint)}",outcome="\w+"}} (\S+)$'
    )
    return sum(float(value) for value in re.findall(pattern, text, re.M))


async def not_asked(
    webhook: KuotaWebhook, write: Callable[[int], Awaitable[None]], tries: int = 3
) -> None:
    """``write`` (given 1, 2, ... so each call changes something) does not reach the
    Workload validation endpoint.  The endpoint's count is the whole cluster's: other
    tests' Workloads go through it too.  So the write counts as not asked when one of
    ``tries`` calls moved the count by 0; had it gone to the webhook, each would have
    moved it by at least 1."""
    moved = []
    for count in range(1, tries + 1):
        seen = webhook_requests(webhook, "workload")
        await write(count)
        moved.append(webhook_requests(webhook, "workload") - seen)
        if moved[-1] == 0:
            return
    raise AssertionError(f"every such write was asked: requests added {moved}")


def patch_status(
    cluster: ClusterHandle, *target: str, status: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    binary: Path = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    return subprocess.run(
        [
            str(binary), "--kubeconfig", str(cluster.kubeconfig), "patch", *target,
            "--subresource=status", "--type=merge", "-p", json.dumps({"status": status}),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip


async def test_status_writes_reach_the_webhook_only_where_kueue_validates_them(
    cluster: ClusterHandle, kuota: KuotaWebhook, api: client.ApiClient, namespace: str
) -> None:
    custom = client.CustomObjectsApi(api)
    cluster_queue = f"scope-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": cluster_queue},
            "spec": {"namespaceSelector": {}},
        },
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "scope"},
            "spec": {"clusterQueue": cluster_queue},
        },
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "workloads",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Workload",
            "metadata": {"name": "scope"},
            "spec": {
                "queueName": "scope",
                "podSets": [
                    {
                        "name": "main",
                        "count": 1,
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [{"name": "main", "image": "busybox"}],
                            }
                        },
                    }
                ],
            },
        },
    )
    try:
        kinds = ("clusterqueue", "localqueue", "workload")
        before = {kind: webhook_requests(kuota, kind) for kind in kinds}
        for written in (
            patch_status(cluster, "clusterqueue", cluster_queue, status={"pendingWorkloads": 7}),
            patch_status(
                cluster, "-n", namespace, "localqueue", "scope", status={"pendingWorkloads": 7}
            ),
        ):
            assert written.returncode == 0, written.stderr  # stored, without asking kuota
        # A Workload status write that changes what the rules read is a question to kuota ...
        judged = patch_status(
            cluster, "-n", namespace, "workload", "scope", status={"clusterName": "worker-1"}
        )
        assert "must be one of the nominated clusters (none)" in judged.stderr  # WL-61
        # ... and so is one carrying a condition WL-35 rejects, answered with the rule's message.
        finished = {
            "type": "Finished",
            "status": "True",
            "reason": "ByTest",
            "message": "By test runner",
            "lastTransitionTime": "2026-11-26T10:00:00Z",
        }
        bad = patch_status(
            cluster, "-n", namespace, "workload", "scope",
            status={"conditions": [{**finished, "reason": "1 bad"}]},
        )  # fmt: skip
        assert "reason must start with a letter" in bad.stderr
        after = {kind: webhook_requests(kuota, kind) for kind in kinds}
        assert {kind: after[kind] - before[kind] for kind in ("clusterqueue", "localqueue")} == {
            "clusterqueue": 0,
            "localqueue": 0,
        }
        assert after["workload"] - before["workload"] >= 2  # those two, and others' writes

        # A write that keeps them, with valid conditions, is one no rule can fault: the tools
        # that run Workloads (Kueue's runner: Finished) write those, and they skip the webhook.
        async def harmless(count: int) -> None:
            written = patch_status(
                cluster, "-n", namespace, "workload", "scope",
                status={"conditions": [finished], "requeueState": {"count": count}},
            )  # fmt: skip
            assert written.returncode == 0, written.stderr

        await not_asked(kuota, harmless)
        # ... and neither is kuota's scheduler itself, whatever it writes (its decisions,
        # thousands a minute): here a clusterName no other writer could set (WL-61).
        assert cluster.workdir is not None
        pki, server = cluster_access(cluster.kubeconfig, cluster.workdir)
        as_scheduler = scheduler_kubeconfig(pki, server, cluster.workdir / "scope-sched.kubeconfig")
        async with connect(as_scheduler) as scheduler_api:

            async def as_the_scheduler(count: int) -> None:
                stored = await Rest(scheduler_api).merge_patch(
                    f"/apis/{GROUP}/{VERSION}/namespaces/{namespace}/workloads/scope/status",
                    {"status": {"clusterName": f"worker-{count}"}},
                )
                assert stored["status"]["clusterName"] == f"worker-{count}"

            await not_asked(kuota, as_the_scheduler)
    finally:
        await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", cluster_queue)


def sample_workload(name: str, pod_sets: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Workload",
        "metadata": {"name": name},
        "spec": {"queueName": "nowhere", "podSets": pod_sets},
    }


def pod_set(**extra: Any) -> dict[str, Any]:
    return {
        "name": "main",
        "count": 3,
        "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
        **extra,
    }


async def test_creating_a_workload_asks_the_mutating_webhook_only_for_a_min_count(
    kuota: KuotaWebhook, api: client.ApiClient, namespace: str
) -> None:
    custom = client.CustomObjectsApi(api)

    async def create(name: str, pod_sets: Any) -> None:
        await custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "workloads", sample_workload(name, pod_sets)
        )

    asked = webhook_requests(kuota, "workload", "mutate")
    await create("plain", [pod_set()])
    assert webhook_requests(kuota, "workload", "mutate") == asked, "no minCount: not asked"
    await create("partial", [pod_set(minCount=1)])
    assert webhook_requests(kuota, "workload", "mutate") == asked + 1, "minCount: asked"
    with pytest.raises(ApiException) as refused:
        await create("malformed", "not-a-list")
    assert refused.value.status == 422
    assert "spec.podSets" in refused.value.body
    assert "match condition" not in refused.value.body


# -- the scheduler applies the same rule ----------------------------------------------------


async def test_the_scheduler_makes_no_workload_for_a_job_outside_the_managed_namespaces(
    cluster: ClusterHandle,
    kuota: KuotaWebhook,
    api: client.ApiClient,
    namespace: str,
    fleet_paused: None,
    tmp_path: Path,
) -> None:
    """A suspended queued Job (created so, the webhook being no part of it) in an unselected
    namespace gets no Workload from a scheduler with a managedJobsNamespaceSelector; the same
    Job in a selected namespace gets one (docs/concepts.md#managed-namespaces)."""
    from .kuota_install import KUOTA_CONFIG
    from .test_retention import start

    config = yaml.safe_load(KUOTA_CONFIG.read_text())
    config["managedJobsNamespaceSelector"] = {"matchLabels": {MANAGED_LABEL: "yes"}}
    config_path = tmp_path / "kuota-config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    custom = client.CustomObjectsApi(api)
    managed = f"selected-{namespace}"
    await core.create_namespace(
        client.V1Namespace(
            metadata=client.V1ObjectMeta(name=managed, labels={MANAGED_LABEL: "yes"})
        )
    )
    replica = start(cluster, config=config_path)
    try:
        for where in (namespace, managed):
            body = queued_job("suspended")
            body["spec"]["suspend"] = True
            await batch.create_namespaced_job(where, body)

        async def workloads(where: str) -> list[dict[str, Any]]:
            listed = await custom.list_namespaced_custom_object(GROUP, VERSION, where, "workloads")
            return list(listed["items"])

        await eventually(
            lambda: workloads(managed),
            lambda items: len(items) == 1,
            timeout=60,
            what="the Workload of the Job in the selected namespace",
        )
        assert await workloads(namespace) == [], "the unselected namespace's Job is left alone"
        job = await batch.read_namespaced_job("suspended", namespace)
        assert job.spec.suspend is True
    finally:
        replica.stop()
        await core.delete_namespace(managed)
