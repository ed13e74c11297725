"""Two-phase admission with AdmissionChecks on a real cluster (docs/scheduling.md#admission-checks).

The test plays a third-party check controller, as any would: it marks its
AdmissionCheck ``Active=True`` and sets the check's state on the Workload by
a status patch.  Quota reservation leaves the Job suspended at
``QuotaReserved`` with the check ``Pending``; ``Ready`` admits it and the
Job runs with the check's ``podSetUpdates``; ``Retry`` releases the quota
and reserves it again after the backoff; ``Rejected`` deactivates the
Workload.  A ClusterQueue referencing a missing check, or a
``kueue.x-k8s.io/provisioning-request`` check (kuota does not run that
controller and says so), admits nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes_asyncio import client

from .kuota_scheduler import SchedulerFleet, SchedulerReplica
from .test_scheduler import GROUP, VERSION, condition, flavor, job, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster
MERGE = "application/merge-patch+json"
NODE = "kwok-ondemand-1"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cluster_queue(name: str, flavor_name: str, *checks: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "admissionChecksStrategy": {"admissionChecks": [{"name": c} for c in checks]},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": flavor_name, "resources": [{"name": "cpu", "nominalQuota": "3"}]}
                    ],
                }
            ],
        },
    }


def admission_check(name: str, controller: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {"controllerName": controller},
    }


class Setup:
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.api = api
        self.namespace = namespace
        self.custom = client.CustomObjectsApi(api)
        self.flavor = f"ondemand-{namespace}"
        self.created: list[tuple[str, str]] = []

    async def create(self, plural: str, obj: dict[str, Any]) -> None:
        await self.custom.create_cluster_custom_object(GROUP, VERSION, plural, obj)
        self.created.append((plural, obj["metadata"]["name"]))

    async def queue(self, cq_name: str, lq_name: str, *checks: str) -> None:
        await self.create("clusterqueues", cluster_queue(cq_name, self.flavor, *checks))
        await self.custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            self.namespace,
            "localqueues",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "LocalQueue",
                "metadata": {"name": lq_name},
                "spec": {"clusterQueue": cq_name},
            },
        )

    async def cq(self, name: str) -> dict[str, Any]:
        return await self.custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", name)

    async def check(self, name: str) -> dict[str, Any]:
        return await self.custom.get_cluster_custom_object(GROUP, VERSION, "admissionchecks", name)

    async def activate(self, name: str) -> None:
        """What the check's controller does when it is ready to evaluate workloads."""
        await self.custom.patch_cluster_custom_object_status(
            GROUP,
            VERSION,
            "admissionchecks",
            name,
            {
                "status": {
                    "conditions": [
                        {
                            "type": "Active",
                            "status": "True",
                            "reason": "Active",
                            "message": "the test controller is ready",
                            "lastTransitionTime": now(),
                        }
                    ]
                }
            },
            _content_type=MERGE,
        )

    async def workload(self, job_name: str) -> dict[str, Any]:
        return (await workloads_of(self.api, self.namespace)).get(job_name) or {}

    async def set_check(self, workload: dict[str, Any], name: str, **fields: Any) -> None:
        """The check controller's status patch of its entry (the whole list: a merge patch)."""
        entries = [
            {**entry, "lastTransitionTime": now(), **fields} if entry["name"] == name else entry
            for entry in workload["status"]["admissionChecks"]
        ]
        await self.custom.patch_namespaced_custom_object_status(
            GROUP,
            VERSION,
            self.namespace,
            "workloads",
            workload["metadata"]["name"],
            {
                "metadata": {"resourceVersion": workload["metadata"]["resourceVersion"]},
                "status": {"admissionChecks": entries},
            },
            _content_type=MERGE,
        )

    async def cleanup(self) -> None:
        batch = client.BatchV1Api(self.api)
        jobs = await batch.list_namespaced_job(self.namespace)
        for item in jobs.items:
            await batch.delete_namespaced_job(
                item.metadata.name, self.namespace, propagation_policy="Background"
            )
        for plural, name in reversed(self.created):
            try:
                await self.custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
            except client.ApiException:
                pass


@pytest.fixture
async def setup(api: client.ApiClient, namespace: str) -> AsyncIterator[Setup]:
    made = Setup(api, namespace)
    await made.create("resourceflavors", flavor(made.flavor, {"instance-type": "ondemand"}))
    yield made
    await made.cleanup()


def pending_checks(workload: dict[str, Any]) -> bool:
    entries = (workload.get("status") or {}).get("admissionChecks") or []
    return (
        (condition(workload, "QuotaReserved") or {}).get("status") == "True"
        and bool(entries)
        and all(e["state"] == "Pending" for e in entries)
    )


async def reserved_and_waiting(setup: Setup, job_name: str) -> dict[str, Any]:
    workload = await eventually(
        lambda: setup.workload(job_name),
        pending_checks,
        timeout=60,
        what=f"{job_name}: quota reserved, its check Pending",
    )
    return workload


async def test_a_job_waits_at_quota_reserved_until_its_check_is_ready_then_runs_with_its_updates(
    scheduler_fleet: SchedulerFleet,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    setup: Setup,
) -> None:
    check, cq = f"ext-{namespace}", f"checked-{namespace}"
    await setup.create("admissionchecks", admission_check(check, "example.com/test-controller"))
    await setup.queue(cq, "user-queue", check)
    inactive = await eventually(
        lambda: setup.cq(cq),
        lambda obj: (condition(obj, "Active") or {}).get("reason") == "AdmissionCheckInactive",
        timeout=30,
        what="the ClusterQueue inactive while its check is not Active",
    )
    assert condition(inactive, "Active") == {
        **(condition(inactive, "Active") or {}),
        "status": "False",
        "message": f"Can't admit new workloads: references inactive AdmissionCheck(s): {check}.",
    }
    await client.BatchV1Api(api).create_namespaced_job(
        namespace, job("gated", "user-queue", delay="600s", tolerate_spot=False)
    )
    await asyncio.sleep(2)
    assert (condition(await setup.workload("gated"), "QuotaReserved") or {}).get(
        "status"
    ) != "True", "an inactive check holds the queue"

    await setup.activate(check)
    workload = await reserved_and_waiting(setup, "gated")
    admitted = condition(workload, "Admitted") or {}
    assert (admitted.get("status"), admitted.get("reason"), admitted.get("message")) == (
        "False",
        "UnsatisfiedAdmissionChecks",
        "The workload has not all checks ready",
    )
    assert [e["name"] for e in workload["status"]["admissionChecks"]] == [check]
    await asyncio.sleep(2)  # a few scheduler turns
    batch = client.BatchV1Api(api)
    assert (await batch.read_namespaced_job("gated", namespace)).spec.suspend is True
    status = (await setup.cq(cq))["status"]
    assert (status["reservingWorkloads"], status["admittedWorkloads"]) == (1, 0)
    assert status["flavorsReservation"][0]["resources"][0]["total"] == "1"
    assert status["flavorsUsage"][0]["resources"][0]["total"] == "0"

    # A restarted scheduler keeps the reservation from the status: nothing admitted twice.
    for replica in scheduler_fleet.alive():
        replica.kill()
    scheduler_fleet.add()
    await asyncio.sleep(4)  # the new leader's first turns
    after = await setup.workload("gated")
    assert pending_checks(after)
    assert after["status"]["admission"] == workload["status"]["admission"]
    assert condition(after, "QuotaReserved") == condition(workload, "QuotaReserved")
    assert (condition(after, "Admitted") or {}).get("status") == "False"
    assert (await batch.read_namespaced_job("gated", namespace)).spec.suspend is True
    status = (await setup.cq(cq))["status"]
    assert (status["reservingWorkloads"], status["admittedWorkloads"]) == (1, 0)
    workload = after

    await setup.set_check(
        workload,
        check,
        state="Ready",
        message="capacity found",
        podSetUpdates=[
            {
                "name": "main",
                "nodeSelector": {"kubernetes.io/hostname": NODE},
                "labels": {"checked-by": "test-controller"},
            }
        ],
    )
    admitted_workload = await eventually(
        lambda: setup.workload("gated"),
        lambda w: (condition(w, "Admitted") or {}).get("status") == "True",
        timeout=30,
        what="Admitted=True once the check is Ready",
    )
    assert (condition(admitted_workload, "Admitted") or {}).get("reason") == "Admitted"
    started = await eventually(
        lambda: batch.read_namespaced_job("gated", namespace),
        lambda j: j.spec.suspend is False,
        timeout=30,
        what="the Job started",
    )
    template = started.spec.template
    assert template.spec.node_selector == {
        "instance-type": "ondemand",
        "kubernetes.io/hostname": NODE,
    }
    assert template.metadata.labels["checked-by"] == "test-controller"
    core = client.CoreV1Api(api)

    async def pods() -> list[client.V1Pod]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector="batch.kubernetes.io/job-name=gated"
        )
        return list(listed.items)

    running = await eventually(
        pods,
        lambda items: any(p.status.phase == "Running" for p in items),
        timeout=60,
        what="the Job's pod running",
    )
    assert {p.spec.node_name for p in running} == {NODE}
    status = (
        await eventually(
            lambda: setup.cq(cq),
            lambda obj: (obj.get("status") or {}).get("admittedWorkloads") == 1,
            timeout=30,
            what="the ClusterQueue counting it admitted",
        )
    )["status"]
    assert status["flavorsUsage"][0]["resources"][0]["total"] == "1"


async def test_retry_releases_and_reserves_again_and_rejected_deactivates(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, setup: Setup
) -> None:
    check, cq = f"ext-{namespace}", f"checked-{namespace}"
    await setup.create("admissionchecks", admission_check(check, "example.com/test-controller"))
    await setup.activate(check)
    await setup.queue(cq, "user-queue", check)
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(
        namespace, job("retried", "user-queue", delay="600s", tolerate_spot=False)
    )
    await batch.create_namespaced_job(
        namespace, job("rejected", "user-queue", delay="600s", tolerate_spot=False)
    )

    # Retry: evicted with Kueue's message, quota released, reserved again after the backoff.
    workload = await reserved_and_waiting(setup, "retried")
    await setup.set_check(
        workload, check, state="Retry", message="no capacity yet", requeueAfterSeconds=6
    )
    released = await eventually(
        lambda: setup.workload("retried"),
        lambda w: (condition(w, "QuotaReserved") or {}).get("status") == "False",
        timeout=30,
        what="the reservation released on Retry",
    )
    evicted = condition(released, "Evicted") or {}
    assert (evicted.get("status"), evicted.get("reason"), evicted.get("message")) == (
        "True",
        "AdmissionCheck",
        f'Evicted due to AdmissionCheck in Retry state: "{check}" (no capacity yet)',
    )
    requeued = condition(released, "Requeued") or {}
    assert (requeued.get("status"), requeued.get("reason")) == ("False", "AdmissionCheck")
    (entry,) = released["status"]["admissionChecks"]
    assert (entry["state"], entry.get("retryCount")) == ("Pending", 1)
    assert released["status"]["requeueState"]["requeueAt"]
    assert (await batch.read_namespaced_job("retried", namespace)).spec.suspend is True
    again = await eventually(
        lambda: setup.workload("retried"),
        pending_checks,
        timeout=60,
        what="the quota reserved again after the backoff",
    )
    reserved_at = (condition(again, "QuotaReserved") or {})["lastTransitionTime"]
    assert reserved_at >= released["status"]["requeueState"]["requeueAt"]
    assert (condition(again, "Requeued") or {}).get("reason") == "BackoffFinished"

    # Rejected: the Workload is deactivated with Kueue's reason; its Job never runs.
    workload = await reserved_and_waiting(setup, "rejected")
    await setup.set_check(workload, check, state="Rejected", message="never fits")
    deactivated = await eventually(
        lambda: setup.workload("rejected"),
        lambda w: (
            w["spec"].get("active") is False
            and (condition(w, "QuotaReserved") or {}).get("status") == "False"
        ),
        timeout=30,
        what="the Workload deactivated and its quota released",
    )
    evicted = condition(deactivated, "Evicted") or {}
    assert (evicted.get("reason"), evicted.get("message")) == (
        "DeactivatedDueToAdmissionCheck",
        "The workload is deactivated due to AdmissionCheck in Rejected state: "
        f'"{check}" (never fits)',
    )
    assert (await batch.read_namespaced_job("rejected", namespace)).spec.suspend is True


async def test_a_missing_or_provisioning_request_check_holds_the_queue(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, setup: Setup
) -> None:
    missing_cq, prov_cq = f"missing-{namespace}", f"prov-{namespace}"
    missing, prov = f"absent-{namespace}", f"prov-{namespace}"
    await setup.create(
        "admissionchecks", admission_check(prov, "kueue.x-k8s.io/provisioning-request")
    )
    await setup.queue(missing_cq, "missing-queue", missing)
    await setup.queue(prov_cq, "prov-queue", prov)
    checked = await eventually(
        lambda: setup.check(prov),
        lambda obj: condition(obj, "Active") is not None,
        timeout=30,
        what="the provisioning-request check reported",
    )
    active = condition(checked, "Active") or {}
    assert (active.get("status"), active.get("reason")) == ("False", "ControllerNotSupported")
    assert "kuota does not run the kueue.x-k8s.io/provisioning-request" in active["message"]

    for name, reason, message in (
        (missing_cq, "AdmissionCheckNotFound", f"references missing AdmissionCheck(s): {missing}"),
        (prov_cq, "AdmissionCheckInactive", f"references inactive AdmissionCheck(s): {prov}"),
    ):
        obj = await eventually(
            lambda name=name: setup.cq(name),  # type: ignore[misc]
            lambda o, reason=reason: (condition(o, "Active") or {}).get("reason") == reason,
            timeout=30,
            what=f"{name} inactive",
        )
        assert (condition(obj, "Active") or {})["message"] == (
            f"Can't admit new workloads: {message}."
        )
    batch = client.BatchV1Api(api)
    for job_name, queue in (("to-missing", "missing-queue"), ("to-prov", "prov-queue")):
        await batch.create_namespaced_job(namespace, job(job_name, queue, tolerate_spot=False))
    for job_name, cq in (("to-missing", missing_cq), ("to-prov", prov_cq)):
        waiting = await eventually(
            lambda job_name=job_name: setup.workload(job_name),  # type: ignore[misc]
            lambda w: (condition(w, "QuotaReserved") or {}).get("reason") == "Suspended",
            timeout=30,
            what=f"{job_name} pending",
        )
        assert (condition(waiting, "QuotaReserved") or {})["message"] == (
            f"ClusterQueue {cq} is inactive"
        )
        assert (await batch.read_namespaced_job(job_name, namespace)).spec.suspend is True


async def test_a_check_removed_from_the_cluster_queue_no_longer_holds_its_workloads(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, setup: Setup
) -> None:
    kept, dropped, cq = f"kept-{namespace}", f"dropped-{namespace}", f"two-checks-{namespace}"
    for name in (kept, dropped):
        await setup.create("admissionchecks", admission_check(name, "example.com/test"))
        await setup.activate(name)
    await setup.queue(cq, "user-queue", kept, dropped)
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(
        namespace, job("held", "user-queue", delay="600s", tolerate_spot=False)
    )
    workload = await reserved_and_waiting(setup, "held")
    assert [e["name"] for e in workload["status"]["admissionChecks"]] == sorted([kept, dropped])
    await setup.set_check(workload, kept, state="Ready")
    await asyncio.sleep(2)
    assert (await batch.read_namespaced_job("held", namespace)).spec.suspend is True

    await setup.custom.patch_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        cq,
        {"spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": kept}]}}},
        _content_type=MERGE,
    )
    admitted = await eventually(
        lambda: setup.workload("held"),
        lambda w: (condition(w, "Admitted") or {}).get("status") == "True",
        timeout=30,
        what="Admitted once the only remaining check is Ready",
    )
    assert [e["name"] for e in admitted["status"]["admissionChecks"]] == [kept]
    await eventually(
        lambda: batch.read_namespaced_job("held", namespace),
        lambda j: j.spec.suspend is False,
        timeout=30,
        what="the Job started",
    )
