"""What a Job carries over to its Workload, on a real cluster.

See docs/concepts.md#from-job-to-workload.

- Kueue's "Should allow updating the workload's priority through the job": a
  low-priority Job waits behind a running mid-priority one; its
  ``kueue.x-k8s.io/priority-class`` label raised to a high class reaches its
  Workload's priority, and it then preempts the running Job.  Emptying the
  label of a running Job is refused by the webhook (a class cannot be removed).
- ``kueue.x-k8s.io/admission-gated-by`` on a Job is copied to its Workload, which
  is then not admitted (``AdmissionGated``); taking the gate off the Job takes it
  off the Workload, which is admitted and the Job started.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from .kuota_scheduler import SchedulerReplica
from .test_reclaimable_pods import reserved
from .test_scheduler import GROUP, VERSION, condition, flavor, job, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster
PRIORITY = "kueue.x-k8s.io/priority-class"
GATE = "kueue.x-k8s.io/admission-gated-by"


@pytest.fixture
async def one_cpu(api: client.ApiClient, namespace: str) -> AsyncIterator[dict[str, str]]:
    """A 1-CPU ClusterQueue that preempts lower priorities, and three priority classes."""
    custom = client.CustomObjectsApi(api)
    names = {
        "flavor": f"ondemand-{namespace}",
        "cq": f"one-cpu-{namespace}",
        "low": f"low-{namespace}",
        "mid": f"mid-{namespace}",
        "high": f"high-{namespace}",
    }
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(names["flavor"], {"instance-type": "ondemand"})
    )
    for level, value in (("low", 100), ("mid", 200), ("high", 300)):
        await custom.create_cluster_custom_object(
            GROUP,
            VERSION,
            "workloadpriorityclasses",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": names[level]},
                "value": value,
            },
        )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": names["cq"]},
            "spec": {
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": names["flavor"],
                                "resources": [{"name": "cpu", "nominalQuota": "1"}],
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
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "main"},
            "spec": {"clusterQueue": names["cq"]},
        },
    )
    yield names
    batch = client.BatchV1Api(api)
    for item in (await batch.list_namespaced_job(namespace)).items:
        try:
            await batch.delete_namespaced_job(
                item.metadata.name, namespace, propagation_policy="Background"
            )
        except client.ApiException as gone:
            if gone.status != 404:  # a test deleted it (orphan propagation: still listed)
                raise
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", names["cq"])
    for level in ("low", "mid", "high"):
        await custom.delete_cluster_custom_object(
            GROUP, VERSION, "workloadpriorityclasses", names[level]
        )
    await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", names["flavor"])


def queued(name: str, *, labels: dict[str, str] | None = None, **annotations: str) -> Any:
    built = job(name, "main", delay="600s", tolerate_spot=False)
    built["metadata"]["labels"].update(labels or {})
    if annotations:
        built["metadata"]["annotations"] = dict(annotations)
    return built


async def test_raising_a_pending_jobs_priority_class_reaches_its_workload_and_preempts(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    one_cpu: dict[str, str],
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, queued("one", labels={PRIORITY: one_cpu["mid"]}))
    await eventually(
        lambda: batch.read_namespaced_job("one", namespace),
        lambda read: read.spec.suspend is False,
        timeout=60,
        what="job one running",
    )
    running = await batch.read_namespaced_job("one", namespace)
    running.metadata.labels[PRIORITY] = ""
    with pytest.raises(client.ApiException) as refused:
        await batch.replace_namespaced_job("one", namespace, running)
    assert refused.value.status == 403, "a WorkloadPriorityClass cannot be removed"
    assert "cannot be removed" in refused.value.body

    await batch.create_namespaced_job(namespace, queued("two", labels={PRIORITY: one_cpu["low"]}))
    waiting = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: (
            (condition(got.get("two") or {}, "QuotaReserved") or {}).get("status") == "False"
        ),
        timeout=60,
        what="job two waiting (lower priority than the running one)",
    )
    assert waiting["two"]["spec"]["priority"] == 100

    pending = await batch.read_namespaced_job("two", namespace)
    pending.metadata.labels[PRIORITY] = one_cpu["high"]
    await batch.replace_namespaced_job("two", namespace, pending)
    raised = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: (got.get("two") or {}).get("spec", {}).get("priority") == 300,
        timeout=60,
        what="job two's Workload at the high priority",
    )
    assert raised["two"]["spec"]["priorityClassRef"] == {
        "group": GROUP,
        "kind": "WorkloadPriorityClass",
        "name": one_cpu["high"],
    }
    await eventually(
        lambda: batch.read_namespaced_job("two", namespace),
        lambda read: read.spec.suspend is False,
        timeout=90,
        what="job two running, having preempted job one",
    )
    preempted = await workloads_of(api, namespace)
    assert (condition(preempted["one"], "Preempted") or {}).get("status") == "True"
    events = await client.CoreV1Api(api).list_namespaced_event(
        namespace, field_selector="involvedObject.name=two,reason=UpdatedWorkload"
    )
    name = raised["two"]["metadata"]["name"]
    assert f"Updated workload priority class: {namespace}/{name}" in {
        event.message for event in events.items
    }


async def test_admission_gates_of_a_job_hold_its_workload_until_they_come_off(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    one_cpu: dict[str, str],
) -> None:
    batch = client.BatchV1Api(api)
    gates = "example.com/quota-broker,example.com/approval"
    await batch.create_namespaced_job(namespace, queued("gated", **{GATE: gates}))
    held = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: (
            (condition(got.get("gated") or {}, "QuotaReserved") or {}).get("reason")
            == "AdmissionGated"
        ),
        timeout=60,
        what="the gated Job's Workload held back",
    )
    assert held["gated"]["metadata"]["annotations"][GATE] == gates
    assert (condition(held["gated"], "QuotaReserved") or {})["message"] == (
        f"Admission is gated by: {gates}"
    )
    assert (await batch.read_namespaced_job("gated", namespace)).spec.suspend is True

    await batch.patch_namespaced_job(
        "gated", namespace, {"metadata": {"annotations": {GATE: "example.com/approval"}}}
    )
    await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: (
            (got["gated"]["metadata"].get("annotations") or {}).get(GATE) == "example.com/approval"
        ),
        timeout=60,
        what="one gate off the Workload",
    )
    await batch.patch_namespaced_job(
        "gated", namespace, {"metadata": {"annotations": {GATE: None}}}
    )
    admitted = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: reserved(got.get("gated")),
        timeout=60,
        what="the Workload admitted once the last gate came off",
    )
    assert GATE not in (admitted["gated"]["metadata"].get("annotations") or {})
    await eventually(
        lambda: batch.read_namespaced_job("gated", namespace),
        lambda read: read.spec.suspend is False,
        timeout=60,
        what="the Job started",
    )


async def _by_name(api: client.ApiClient, namespace: str) -> dict[str, dict[str, Any]]:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "workloads"
    )
    return {item["metadata"]["name"]: item for item in listed["items"]}


async def test_a_job_deleted_with_orphan_propagation_leaves_its_workload_finished(
    one_cpu: dict[str, str],
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
) -> None:
    """Kueue's "Should finish workload if the job is deleted with PropagationPolicy=Orphan".

    On this shared machine the garbage collector may learn of a new Workload only after the
    Job is gone, and then deletes it as a dependent whose owner is missing; the test takes
    the owner reference off itself, as the collector does for an orphaning deletion.
    """
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, queued("orphaned"))
    admitted = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: (
            (condition(got.get("orphaned") or {}, "QuotaReserved") or {}).get("status") == "True"
        ),
        timeout=60,
        what="the Job's Workload admitted",
    )
    name = admitted["orphaned"]["metadata"]["name"]
    # What the garbage collector does to the Workload when the Job goes with orphan
    # propagation (done here, so the test does not hang on the collector's pace): the
    # Job's owner reference comes off.  Then the Job goes.
    await client.CustomObjectsApi(api).patch_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "workloads",
        name,
        [{"op": "remove", "path": "/metadata/ownerReferences"}],
    )
    await batch.delete_namespaced_job(
        "orphaned", namespace, body=client.V1DeleteOptions(propagation_policy="Orphan")
    )
    finished = await eventually(
        lambda: _by_name(api, namespace),
        lambda got: (condition(got.get(name) or {}, "Finished") or {}).get("status") == "True",
        timeout=60,
        what="the orphaned Workload finished",
    )
    assert not finished[name]["metadata"].get("ownerReferences"), "the job let go of it"
    done = condition(finished[name], "Finished")
    assert done is not None
    assert (done["reason"], done["message"]) == (
        "OwnerNotFound",
        "The workload's owner no longer exists",
    )
    assert not finished[name]["metadata"].get("finalizers")
