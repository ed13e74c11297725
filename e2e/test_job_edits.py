"""A queued Job edited after its Workload was built, on the local cluster.

The Workload must follow the Job: were kuota to charge the Workload built
when the Job was created, a user with ``edit`` in their namespace could add
an on-demand ``nodeSelector`` to a pending queued Job, have it admitted on
spot, and run its pod on an on-demand node while on-demand quota is full.
So (docs/concepts.md#from-job-to-workload):

* a pending Job given an on-demand nodeSelector (by a tenant with the
  ``edit`` role) is not admitted on spot when spot frees; it waits for
  on-demand quota and its pod runs on an on-demand node;
* a pending Job whose parallelism changes is charged the new pod count;
* an admitted, running Job that its user suspends and resizes in one update
  (JOB-K2 allows exactly that) is queued again at the new size instead of
  being restarted on its old admission.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from e2e.cluster.tools import ToolPaths

from .fixtures import ClusterHandle
from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
QUEUE = "kueue.x-k8s.io/queue-name"
TENANT = "tenant@example.com"
ON_DEMAND = {"instance-type": "ondemand"}
SPOT_TOLERATION = {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


def kubectl(cluster: ClusterHandle, namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    binary: Path = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    return subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), "-n", namespace, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def cpu_job(
    name: str, *, parallelism: int = 1, completions: int = 1, tolerate_spot: bool = False
) -> dict[str, Any]:
    """A queued Job of ``parallelism`` 1-CPU pods that kwok keeps running for 10 minutes."""
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
        ],
    }
    if tolerate_spot:
        pod_spec["tolerations"] = [SPOT_TOLERATION]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE: "user-queue"}},
        "spec": {
            "parallelism": parallelism,
            "completions": completions,
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "600s"}},
                "spec": pod_spec,
            },
        },
    }


class Pool:
    """A ClusterQueue with an on-demand and a spot flavor, and LocalQueue ``user-queue``."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.api = api
        self.namespace = namespace
        self.ondemand = f"ondemand-{namespace}"
        self.spot = f"spot-{namespace}"
        self.cluster_queue = f"edits-{namespace}"
        self.custom = client.CustomObjectsApi(api)
        self.batch = client.BatchV1Api(api)

    async def create(self, *, ondemand_cpu: str, spot_cpu: str) -> None:
        flavors = [
            (self.ondemand, {"instance-type": "ondemand"}, None),
            (
                self.spot,
                {"instance-type": "spot"},
                [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
            ),
        ]
        for name, labels, taints in flavors:
            spec: dict[str, Any] = {"nodeLabels": labels}
            if taints:
                spec["nodeTaints"] = taints
            await self.custom.create_cluster_custom_object(
                GROUP,
                VERSION,
                "resourceflavors",
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": "ResourceFlavor",
                    "metadata": {"name": name},
                    "spec": spec,
                },
            )
        quotas = [(self.ondemand, ondemand_cpu), (self.spot, spot_cpu)]
        await self.custom.create_cluster_custom_object(
            GROUP,
            VERSION,
            "clusterqueues",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "ClusterQueue",
                "metadata": {"name": self.cluster_queue},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [
                                {"name": name, "resources": [{"name": "cpu", "nominalQuota": q}]}
                                for name, q in quotas
                            ],
                        }
                    ],
                },
            },
        )
        await self.custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            self.namespace,
            "localqueues",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "LocalQueue",
                "metadata": {"name": "user-queue"},
                "spec": {"clusterQueue": self.cluster_queue},
            },
        )

    async def delete(self) -> None:
        for item in (await self.batch.list_namespaced_job(self.namespace)).items:
            await self.batch.delete_namespaced_job(
                item.metadata.name, self.namespace, propagation_policy="Background"
            )
        await self.custom.delete_cluster_custom_object(
            GROUP, VERSION, "clusterqueues", self.cluster_queue
        )
        for name in (self.ondemand, self.spot):
            await self.custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", name)

    async def workload(self, job_name: str) -> dict[str, Any] | None:
        listed = await self.custom.list_namespaced_custom_object(
            GROUP, VERSION, self.namespace, "workloads"
        )
        for item in listed["items"]:
            owners = item["metadata"].get("ownerReferences") or []
            if owners and owners[0]["name"] == job_name:
                return dict(item)
        return None

    async def admitted_on(self, job_name: str, *, timeout: float = 60) -> dict[str, Any]:
        """Wait for the Job's Workload to hold quota; the Workload."""
        workload = await eventually(
            lambda: self.workload(job_name),
            lambda wl: wl is not None and reserved(wl),
            timeout=timeout,
            what=f"the Workload of {job_name} admitted",
        )
        assert workload is not None
        return workload

    async def reservation(self) -> dict[str, str]:
        """The ClusterQueue's reserved CPU per flavor, as its status reports it."""
        stored = await self.custom.get_cluster_custom_object(
            GROUP, VERSION, "clusterqueues", self.cluster_queue
        )
        return {
            item["name"]: item["resources"][0]["total"]
            for item in (stored.get("status") or {}).get("flavorsReservation") or []
        }

    async def release(self, job_name: str) -> None:
        """The Job is deleted (its Workload goes with it): its quota frees."""
        await self.batch.delete_namespaced_job(
            job_name, self.namespace, propagation_policy="Background"
        )
        await eventually(
            lambda: self.workload(job_name),
            lambda wl: wl is None,
            timeout=60,
            what=f"the Workload of {job_name} gone",
        )


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return found[0] if found else {}


def reserved(workload: dict[str, Any]) -> bool:
    return condition(workload, "QuotaReserved").get("status") == "True" and bool(
        (workload.get("status") or {}).get("admission")
    )


def flavor_of(workload: dict[str, Any]) -> str:
    return str(workload["status"]["admission"]["podSetAssignments"][0]["flavors"]["cpu"])


def template_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return dict(workload["spec"]["podSets"][0]["template"]["spec"])


@pytest.fixture
async def pool(api: client.ApiClient, namespace: str) -> AsyncIterator[Pool]:
    created = Pool(api, namespace)
    yield created
    await created.delete()


@pytest.fixture
async def tenant(api: client.ApiClient, namespace: str) -> str:
    """``tenant@example.com`` has the built-in ``edit`` role in ``namespace``, nothing more."""
    await client.RbacAuthorizationV1Api(api).create_namespaced_role_binding(
        namespace,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "tenant-edit"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "edit",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": TENANT}],
        },
    )
    return TENANT


async def pods_of(api: client.ApiClient, namespace: str, job_name: str) -> list[client.V1Pod]:
    listed = await client.CoreV1Api(api).list_namespaced_pod(
        namespace, label_selector=f"batch.kubernetes.io/job-name={job_name}"
    )
    return [pod for pod in listed.items if pod.metadata.deletion_timestamp is None]


async def job_event_reasons(api: client.ApiClient, namespace: str, job_name: str) -> set[str]:
    listed = await client.CoreV1Api(api).list_namespaced_event(
        namespace, field_selector=f"involvedObject.kind=Job,involvedObject.name={job_name}"
    )
    return {event.reason for event in listed.items}


async def test_a_tenants_on_demand_selector_waits_for_on_demand_quota_not_spot(
    cluster: ClusterHandle,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    pool: Pool,
    tenant: str,
) -> None:
    await pool.create(ondemand_cpu="1", spot_cpu="1")
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, cpu_job("on-demand-filler"))
    assert flavor_of(await pool.admitted_on("on-demand-filler")) == pool.ondemand
    await batch.create_namespaced_job(namespace, cpu_job("spot-filler", tolerate_spot=True))
    assert flavor_of(await pool.admitted_on("spot-filler")) == pool.spot

    # The tenant's Job tolerates spot and waits: both flavors are full.
    await batch.create_namespaced_job(namespace, cpu_job("sneaky", tolerate_spot=True))
    await eventually(
        lambda: pool.workload("sneaky"),
        lambda wl: wl is not None and condition(wl, "QuotaReserved").get("status") == "False",
        timeout=60,
        what="the tenant's Workload pending",
    )
    patched = kubectl(
        cluster, namespace, "--as", tenant, "patch", "job", "sneaky", "--type=merge", "-p",
        json.dumps({"spec": {"template": {"spec": {"nodeSelector": ON_DEMAND}}}}),
    )  # fmt: skip
    assert patched.returncode == 0, patched.stderr
    rebuilt = await eventually(
        lambda: pool.workload("sneaky"),
        lambda wl: wl is not None and "nodeSelector" in template_spec(wl),
        timeout=60,
        what="the tenant's Workload rebuilt from the edited Job",
    )
    assert rebuilt is not None and not reserved(rebuilt)
    assert template_spec(rebuilt)["nodeSelector"] == ON_DEMAND
    await eventually(
        lambda: job_event_reasons(api, namespace, "sneaky"),
        lambda reasons: "UpdatedWorkload" in reasons,
        timeout=30,
        what="the UpdatedWorkload event on the tenant's Job",
    )

    # Spot frees.  The tenant's Workload is examined again and stays pending:
    # spot does not match its nodeSelector, on-demand is full.
    await pool.release("spot-filler")
    waiting = await eventually(
        lambda: pool.workload("sneaky"),
        lambda wl: (
            wl is not None
            and (
                reserved(wl)
                or "doesn't match node affinity" in condition(wl, "QuotaReserved")["message"]
            )
        ),
        timeout=60,
        what="the tenant's Workload examined with spot free",
    )
    assert waiting is not None and not reserved(waiting), (
        f"admitted on {flavor_of(waiting)} although the Job asks for on-demand nodes"
    )
    assert condition(waiting, "QuotaReserved")["message"] == (
        f"couldn't assign flavors to pod set main: flavor {pool.spot} doesn't match node "
        f"affinity, insufficient unused quota for cpu in flavor {pool.ondemand}, 1 more needed"
    )
    assert (await batch.read_namespaced_job("sneaky", namespace)).spec.suspend is True
    assert await pods_of(api, namespace, "sneaky") == []
    await eventually(
        pool.reservation,
        lambda got: got == {pool.ondemand: "1", pool.spot: "0"},
        timeout=30,
        what="the ClusterQueue reporting nothing reserved on spot",
    )
    assert not reserved(await pool.workload("sneaky") or {}), "still pending"

    # On-demand frees: the tenant's Job is admitted there and its pod runs there.
    await pool.release("on-demand-filler")
    admitted = await pool.admitted_on("sneaky")
    assert flavor_of(admitted) == pool.ondemand
    started = await eventually(
        lambda: pods_of(api, namespace, "sneaky"),
        lambda pods: len(pods) == 1 and bool(pods[0].spec.node_name),
        timeout=60,
        what="the tenant's pod bound",
    )
    assert started[0].spec.node_name.startswith("kwok-ondemand-"), started[0].spec.node_name
    await eventually(
        pool.reservation,
        lambda got: got == {pool.ondemand: "1", pool.spot: "0"},
        timeout=30,
        what="the ClusterQueue reporting 1 on-demand CPU reserved, none on spot",
    )


async def test_a_pending_jobs_new_parallelism_is_what_its_admission_charges(
    cluster: ClusterHandle,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    pool: Pool,
) -> None:
    await pool.create(ondemand_cpu="3", spot_cpu="0")
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, cpu_job("filler", parallelism=3, completions=3))
    await pool.admitted_on("filler")
    await batch.create_namespaced_job(namespace, cpu_job("grows", parallelism=1, completions=4))
    await eventually(
        lambda: pool.workload("grows"),
        lambda wl: wl is not None and condition(wl, "QuotaReserved").get("status") == "False",
        timeout=60,
        what="the Workload of grows pending",
    )
    patched = kubectl(
        cluster, namespace, "patch", "job", "grows", "--type=merge", "-p",
        '{"spec":{"parallelism":2}}',
    )  # fmt: skip
    assert patched.returncode == 0, patched.stderr
    await eventually(
        lambda: pool.workload("grows"),
        lambda wl: wl is not None and wl["spec"]["podSets"][0]["count"] == 2,
        timeout=60,
        what="the Workload's pod set count following the Job's parallelism",
    )

    await pool.release("filler")
    admitted = await pool.admitted_on("grows")
    (assignment,) = admitted["status"]["admission"]["podSetAssignments"]
    assert assignment["count"] == 2
    assert assignment["resourceUsage"] == {"cpu": "2"}
    await eventually(
        pool.reservation,
        lambda got: got.get(pool.ondemand) == "2",
        timeout=30,
        what="the ClusterQueue reporting 2 CPUs reserved",
    )
    running = await eventually(
        lambda: batch.read_namespaced_job("grows", namespace),
        lambda j: j.spec.suspend is False,
        timeout=60,
        what="grows started",
    )
    assert running.spec.parallelism == 2


async def test_an_admitted_job_suspended_and_resized_by_its_user_is_queued_again_at_its_new_size(
    cluster: ClusterHandle,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    pool: Pool,
) -> None:
    await pool.create(ondemand_cpu="3", spot_cpu="0")
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, cpu_job("resized", parallelism=1, completions=4))
    first = await pool.admitted_on("resized")
    await eventually(
        lambda: pods_of(api, namespace, "resized"),
        lambda pods: len(pods) == 1,
        timeout=60,
        what="the first pod",
    )
    patched = kubectl(
        cluster, namespace, "patch", "job", "resized", "--type=merge", "-p",
        '{"spec":{"suspend":true,"parallelism":2}}',
    )  # fmt: skip
    assert patched.returncode == 0, patched.stderr

    async def again() -> dict[str, Any] | None:
        workload = await pool.workload("resized")
        if workload is None or workload["metadata"]["uid"] == first["metadata"]["uid"]:
            return None
        return workload

    requeued = await eventually(
        again,
        lambda wl: wl is not None and reserved(wl),
        timeout=90,
        what="a new Workload for the resized Job, admitted",
    )
    assert requeued is not None
    assert requeued["spec"]["podSets"][0]["count"] == 2
    assert requeued["metadata"]["name"] == first["metadata"]["name"], "one name per Job"
    await eventually(
        lambda: job_event_reasons(api, namespace, "resized"),
        lambda reasons: "DeletedWorkload" in reasons,
        timeout=30,
        what="the DeletedWorkload event on the resized Job",
    )
    assert "nodeSelector" not in template_spec(requeued), "the old placement is not inherited"
    assert requeued["status"]["admission"]["podSetAssignments"][0]["resourceUsage"] == {"cpu": "2"}
    running = await eventually(
        lambda: batch.read_namespaced_job("resized", namespace),
        lambda j: j.spec.suspend is False,
        timeout=60,
        what="the resized Job running again",
    )
    assert running.spec.parallelism == 2, "the user's new size, not the old admission's"
    await eventually(
        pool.reservation,
        lambda got: got.get(pool.ondemand) == "2",
        timeout=30,
        what="the ClusterQueue reporting 2 CPUs reserved",
    )
