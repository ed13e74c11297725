"""kuota's Events on the local cluster, as ``kubectl get events`` shows them.

The scheduler (with the chart's permissions only) writes complete ``core/v1``
Events: a real LAST SEEN instead of ``<unknown>``, its component and replica
as the source.  A repeated event is one Event whose count grows: shown with
kuota's own recorder, writing as the scheduler's ServiceAccount, so the
chart's ``create``/``patch`` on events is proven too.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest
from kubernetes_asyncio import client

from scheduler.kube.client import connect
from scheduler.kube.events import EventRecorder
from scheduler.kube.rest import Rest

from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_scheduler import SchedulerFleet
from .test_scheduler import GROUP, VERSION, flavor, job
from .waiting import eventually

pytestmark = pytest.mark.cluster
AGE = re.compile(r"^\d+(\.\d+)?[smhd](\d+[smh])?$")
"""What kubectl prints for a known time (``4s``, ``2m3s``); ``<unknown>`` when there is none."""


def kubectl(cluster: ClusterHandle, *args: str) -> str:
    binary: Path = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    done = subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def table(text: str) -> list[dict[str, str]]:
    """kubectl's aligned table as rows of column -> cell (columns start where headers do).

    Headers are separated by at least three spaces and may contain one (``LAST SEEN``).
    """
    header, *lines = text.splitlines()
    found = list(re.finditer(r"\S+(?: \S+)*", header))
    names = [match.group() for match in found]
    starts = [match.start() for match in found]
    ends: list[int | None] = [*starts[1:], None]
    return [
        {
            name: line[start:end].strip()
            for name, start, end in zip(names, starts, ends, strict=True)
        }
        for line in lines
    ]


def kuota_events(cluster: ClusterHandle, namespace: str) -> list[dict[str, Any]]:
    listed = json.loads(kubectl(cluster, "get", "events", "-n", namespace, "-o", "json"))
    return [
        event for event in listed["items"] if event.get("reportingComponent") == "kuota-scheduler"
    ]


@pytest.fixture
async def small_pool(api: client.ApiClient, namespace: str) -> str:
    custom = client.CustomObjectsApi(api)
    flavor_name, cq = f"ondemand-{namespace}", f"events-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(flavor_name, {"instance-type": "ondemand"})
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": cq},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": flavor_name,
                                "resources": [{"name": "cpu", "nominalQuota": "2"}],
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
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": cq},
        },
    )
    return cq


async def test_an_admitted_job_has_kuota_events_with_a_real_last_seen(
    scheduler_fleet: SchedulerFleet,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    small_pool: str,
) -> None:
    body = job("train", "user-queue", delay="2s", tolerate_spot=False)
    await client.BatchV1Api(api).create_namespaced_job(namespace, cast(Any, body))

    wanted = {"CreatedWorkload", "QuotaReserved", "Started"}
    events = await eventually(
        lambda: asyncio.to_thread(kuota_events, cluster, namespace),
        lambda got: wanted <= {event["reason"] for event in got},
        timeout=60,
        what=f"kuota's {sorted(wanted)} events",
    )
    leader = scheduler_fleet.leader()
    assert leader is not None
    for event in events:
        assert event["firstTimestamp"] and event["lastTimestamp"], event
        assert event["count"] >= 1
        assert event["source"] == {"component": "kuota-scheduler", "host": leader.identity}
        assert event["reportingInstance"] == leader.identity
    started = next(event for event in events if event["reason"] == "Started")
    assert started["involvedObject"]["kind"] == "Job"
    assert started["involvedObject"]["apiVersion"] == "batch/v1"
    assert started["message"] == f"Admitted by clusterQueue {small_pool}"

    rows = table(kubectl(cluster, "get", "events", "-n", namespace))
    shown = {row["REASON"]: row for row in rows if row["REASON"] in wanted}
    assert set(shown) == wanted, rows
    for reason, row in shown.items():
        assert AGE.match(row["LAST SEEN"]), (reason, row)


async def test_a_repeated_event_is_one_event_whose_count_grows(
    scheduler_fleet: SchedulerFleet,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
) -> None:
    config_map = await client.CoreV1Api(api).create_namespaced_config_map(
        namespace, cast(Any, {"metadata": {"name": "subject"}, "data": {}})
    )
    involved = api.sanitize_for_serialization(config_map)
    reason, message = "RepeatedForTest", "the same thing happened again"
    async with connect(scheduler_fleet.kubeconfig) as scheduler_identity:
        recorder = EventRecorder(Rest(scheduler_identity), instance="e2e-recorder")
        for _ in range(2):  # queued together: one create, count 2
            recorder.record(involved, kind="ConfigMap", reason=reason, message=message)
        await recorder.flush()
        for _ in range(3):  # each one more: three patches
            recorder.record(involved, kind="ConfigMap", reason=reason, message=message)
            await recorder.flush()
    assert recorder.dropped == 0, "written as the scheduler's ServiceAccount: create and patch"

    listed = json.loads(
        kubectl(
            cluster,
            "get",
            "events",
            "-n",
            namespace,
            "--field-selector",
            f"reason={reason}",
            "-o",
            "json",
        )
    )
    (event,) = listed["items"]
    assert event["count"] == 5
    assert event["involvedObject"]["name"] == "subject"
    assert event["firstTimestamp"] <= event["lastTimestamp"]

    rows = [
        row
        for row in table(kubectl(cluster, "get", "events", "-n", namespace, "-o", "wide"))
        if row["REASON"] == reason
    ]
    assert len(rows) == 1, rows
    (row,) = rows
    assert row["COUNT"] == "5"
    assert AGE.match(row["LAST SEEN"]), row


async def test_a_usage_based_queue_without_admission_fair_sharing_gets_a_warning_event(
    scheduler_fleet: SchedulerFleet,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
) -> None:
    """The session's scheduler has no admissionFairSharing section: the mode does nothing,
    and ``kubectl describe clusterqueue`` says so."""
    custom = client.CustomObjectsApi(api)
    name = f"usage-based-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {"admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"}},
        },
    )
    try:
        warned = await eventually(
            lambda: asyncio.to_thread(kuota_events, cluster, "default"),
            lambda got: any(
                e["involvedObject"].get("name") == name
                and e["reason"] == "AdmissionFairSharingNotConfigured"
                for e in got
            ),
            timeout=60,
            what="the Warning Event on the ClusterQueue",
        )
        event = next(e for e in warned if e["involvedObject"].get("name") == name)
        assert event["type"] == "Warning"
        assert "has no admissionFairSharing section" in event["message"]
        described = kubectl(cluster, "describe", "clusterqueue", name)
        assert "AdmissionFairSharingNotConfigured" in described
    finally:
        await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", name)
