"""The dashboard in a real browser: sign in, every page, a queued Job and its move when admitted.

``kuota-dashboard`` runs as a local process with the chart's RBAC; headless
Chromium (:mod:`e2e.browser`) signs in with a viewer's ServiceAccount token
and reads the page as a person would.  A Job that waits behind a running one
shows its position and the engine's reason; when the running one goes, the
page (never reloaded) shows it admitted, from the live updates.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from . import metrics_access
from .browser import Browser, Page
from .cluster.pki import ClusterPki
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_dashboard import DashboardProcess, start_dashboard
from .kuota_install import KuotaWebhook, apply_objects
from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
VIEWER = "kuota-dashboard-viewer"
ROWS = """[...document.querySelectorAll('#view tr[data-key]')].map((row) => ({
  key: row.dataset.key, state: row.dataset.state,
  position: row.querySelector('[data-field=position]')?.textContent,
  reason: row.querySelector('[data-field=reason]')?.textContent,
  message: row.querySelector('[data-field=message]')?.textContent}))"""


def viewer_role() -> list[dict[str, Any]]:
    """What a person who looks at queues may read (bound to the viewer's ServiceAccount)."""
    return [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": VIEWER},
            "rules": [
                {
                    "apiGroups": [GROUP],
                    "resources": [
                        "clusterqueues",
                        "cohorts",
                        "localqueues",
                        "resourceflavors",
                        "workloads",
                    ],
                    "verbs": ["get", "list"],
                },
                {"apiGroups": [""], "resources": ["events", "nodes"], "verbs": ["list"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": VIEWER},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": VIEWER,
            },
            "subjects": [{"kind": "ServiceAccount", "name": VIEWER, "namespace": "kueue-system"}],
        },
    ]


@pytest.fixture(scope="module")
def dashboard(
    cluster: ClusterHandle, kuota: KuotaWebhook
) -> Iterator[tuple[DashboardProcess, str]]:
    """The dashboard process and a viewer's token."""
    assert cluster.workdir is not None and cluster.info is not None
    kubectl = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    apply_objects(kubectl, cluster.kubeconfig, viewer_role())
    token = metrics_access.service_account_token(kubectl, cluster.kubeconfig, VIEWER)
    process = start_dashboard(
        kubectl,
        cluster.kubeconfig,
        ClusterPki(cluster.workdir / "pki"),
        cluster.info.server,
        cluster.workdir,
    )
    yield process, token
    process.stop()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    started = await Browser.start()
    yield started
    await started.close()


def job(name: str, queue: str, *, delay: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": delay}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}},
                        }
                    ],
                },
            }
        },
    }


@pytest.fixture
async def one_cpu(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """A ClusterQueue of one CPU and its LocalQueue ``lq``; the ClusterQueue's name."""
    custom = client.CustomObjectsApi(api)
    kueue = {"apiVersion": f"{GROUP}/{VERSION}"}
    name = f"dash-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "resourceflavors",
        {**kueue, "kind": "ResourceFlavor", "metadata": {"name": name}},
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            **kueue,
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": name, "resources": [{"name": "cpu", "nominalQuota": "1"}]}
                        ],
                    }
                ],
            },
        },
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {**kueue, "kind": "LocalQueue", "metadata": {"name": "lq"}, "spec": {"clusterQueue": name}},
    )
    yield name
    batch = client.BatchV1Api(api)
    for job_name in ("first", "second"):
        try:
            await batch.delete_namespaced_job(job_name, namespace, propagation_policy="Background")
        except client.ApiException:
            pass
    for plural in ("clusterqueues", "resourceflavors"):
        try:
            await custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
        except client.ApiException:
            pass


async def workload_of(api: client.ApiClient, namespace: str, job_name: str) -> dict[str, Any]:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "workloads"
    )
    for item in listed["items"]:
        owners = item["metadata"].get("ownerReferences") or []
        if any(owner["name"] == job_name for owner in owners):
            return dict(item)
    return {}


def admitted(workload: dict[str, Any]) -> bool:
    conditions = (workload.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions)


async def sign_in(page: Page, url: str, token: str) -> None:
    await page.goto(url)
    await eventually(
        lambda: page.evaluate(
            "!!document.getElementById('login') && !document.getElementById('login').hidden"
        ),
        bool,
        timeout=30,
        what="the sign-in form",
    )
    await page.evaluate(
        f"document.getElementById('token').value = {json.dumps(token)};"
        "document.getElementById('login').requestSubmit(); true"
    )


async def shown(page: Page, route: str, check: str, what: str, timeout: float = 30) -> Any:
    """Go to ``route`` (without reloading) and wait until ``check`` holds in the page."""
    await page.evaluate(f"location.hash = {json.dumps(route)}; true")
    return await eventually(lambda: page.evaluate(check), bool, timeout=timeout, what=what)


async def test_a_queued_job_shows_its_position_and_reason_then_moves_when_admitted(
    dashboard: tuple[DashboardProcess, str],
    kuota_scheduler: SchedulerReplica,
    browser: Browser,
    api: client.ApiClient,
    namespace: str,
    one_cpu: str,
) -> None:
    process, token = dashboard
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("first", "lq", delay="600s"))
    await eventually(
        lambda: workload_of(api, namespace, "first"), admitted, timeout=60, what="first admitted"
    )
    await batch.create_namespaced_job(namespace, job("second", "lq", delay="600s"))
    second = await eventually(
        lambda: workload_of(api, namespace, "second"), bool, timeout=60, what="second's Workload"
    )
    key = f"{namespace}/{second['metadata']['name']}"

    page = await browser.page()
    await sign_in(page, process.url, token)
    await eventually(
        lambda: page.evaluate("document.getElementById('who').textContent"),
        lambda who: who == f"system:serviceaccount:kueue-system:{VIEWER}",
        timeout=30,
        what="signed in as the viewer",
    )

    def row_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
        return next((row for row in rows if row["key"] == key), {})

    await page.evaluate(f"location.hash = '#/workloads?namespace={namespace}'; true")
    waiting = await eventually(
        lambda: page.evaluate(ROWS),
        lambda rows: row_of(rows).get("position") == "1 of 1",
        timeout=60,
        what=f"{key} pending, first in line",
    )
    row = row_of(waiting)
    assert (row["state"], row["reason"]) == ("Pending", "WaitingForQuota")
    assert "insufficient unused quota for cpu" in row["message"], row

    def row(key: str, inside: str = "") -> str:
        return f"document.querySelector('#view tr[data-key=\"{key}\"]{inside}')"

    explanation = "(document.querySelector('[data-field=explanation]')?.textContent || '')"
    pages = {
        "#/": f"{row(one_cpu)} !== null",
        "#/clusterqueues": f"{row(one_cpu, ' [data-field=pending]')}?.textContent === '1'",
        "#/cohorts": "document.querySelector('#view h2')?.textContent === 'Cohorts'",
        "#/localqueues": f"{row(f'{namespace}/lq')} !== null",
        "#/flavors": f"{row(one_cpu)} !== null",
        f"#/clusterqueue/{one_cpu}": "document.querySelectorAll('#view svg.plot').length === 2",
        f"#/workload/{key}": f"{explanation}.includes('Position: 1 of 1 pending')",
    }
    for route, check in pages.items():
        await shown(page, route, check, f"page {route}")
    assert await page.evaluate("document.querySelector('[data-field=error]') === null")

    await page.evaluate(f"location.hash = '#/workloads?namespace={namespace}'; true")
    await eventually(
        lambda: page.evaluate("document.getElementById('status').textContent"),
        lambda status: status == "live",
        timeout=30,
        what="the live updates connected",
    )
    await batch.delete_namespaced_job("first", namespace, propagation_policy="Background")
    moved = await eventually(
        lambda: page.evaluate(ROWS),
        lambda rows: row_of(rows).get("state") == "Admitted",
        timeout=90,
        what=f"{key} shown admitted without a reload",
    )
    assert row_of(moved)["position"] == "-"


async def test_a_token_the_cluster_does_not_know_is_refused(
    dashboard: tuple[DashboardProcess, str], browser: Browser
) -> None:
    process, _ = dashboard
    page = await browser.page()
    await sign_in(page, process.url, "not-a-token")
    await eventually(
        lambda: page.evaluate("document.getElementById('login-error').textContent"),
        lambda text: "the token is not valid" in (text or ""),
        timeout=30,
        what="the sign-in refused",
    )
    assert await page.evaluate("document.getElementById('nav').hidden") is True
