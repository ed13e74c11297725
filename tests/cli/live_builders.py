"""A live cluster's objects for the tests of the live commands, made with ``tests.builders``.

A small fluent world: ``LiveCluster().flavor(...).cluster_queue(...)`` ...
``.objects`` gives the ``ClusterObjects`` the cluster reader would return.
Jobs become Workloads the way the scheduler makes them
(``scheduler.jobs.workload_from_job``); ``admitted=`` adds the status the
scheduler writes on admission.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scheduler.cli.live import ClusterObjects
from scheduler.jobs import workload_from_job
from tests import builders
from tests.builders import (
    cluster_queue,
    container,
    flavor_quotas,
    local_queue,
    resource_flavor,
    stamp,
)

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


class LiveCluster:
    def __init__(self) -> None:
        self.objects = ClusterObjects()
        self._serial = 0

    def flavor(self, name: str, labels: dict[str, str], taint: bool = False) -> LiveCluster:
        built = resource_flavor(name).uid(f"rf-{name}").node_labels(labels)
        if taint:
            built.taint("spot", "true")
        self.objects.resource_flavors.append(built.build())
        return self

    def cluster_queue(
        self,
        name: str,
        quotas: list[tuple[str, dict[str, str]]],
        *,
        cohort: str | None = None,
    ) -> LiveCluster:
        covered = sorted({resource for _, resources in quotas for resource in resources})
        built = cluster_queue(name).uid(f"cq-{name}")
        built.resource_group(
            *(flavor_quotas(flavor, **resources) for flavor, resources in quotas), covered=covered
        )
        if cohort:
            built.cohort(cohort)
        self.objects.cluster_queues.append(built.build())
        return self

    def local_queue(self, namespace: str, name: str, cluster_queue: str) -> LiveCluster:
        self.objects.local_queues.append(
            local_queue(name, namespace).cluster_queue(cluster_queue).build()
        )
        if not any(ns["metadata"]["name"] == namespace for ns in self.objects.namespaces):
            self.objects.namespaces.append(builders.namespace(namespace).build())
        return self

    def job(
        self,
        namespace: str,
        name: str,
        queue: str,
        *,
        cpu: str = "1",
        created: datetime | None = None,
        priority: int | None = None,
        admitted: tuple[str, str] | None = None,
        finished: bool = False,
        tolerate_spot: bool = True,
        with_workload: bool = True,
        kind: str = "Job",
    ) -> dict[str, Any]:
        """A Job (or, ``kind="JobSet"``, a JobSet of one replicated job ``workers``) and
        (unless ``with_workload=False``) its Workload; ``admitted=(cluster queue, flavor)``.
        """
        self._serial += 1
        created = created or T0 + timedelta(seconds=self._serial)
        built = (
            builders.job(name, namespace)
            .uid(f"uid-{name}")
            .created(created)
            .queue(queue)
            .suspend(admitted is None)
            .containers(container("main", requests={"cpu": cpu}))
        )
        if tolerate_spot:
            built.toleration("spot", operator="Exists", effect="NoSchedule")
        pod_set = "main"
        if kind == "JobSet":
            pod_set = "workers"
            job_spec = built.unset("spec.suspend").raw["spec"]
            built = (
                builders.jobset(name, namespace)
                .uid(f"uid-{name}")
                .created(created)
                .queue(queue)
                .suspend(admitted is None)
                .replicated_job(pod_set, replicas=1, job_spec=job_spec)
            )
        job = built.build()
        self.objects.jobs.append(job)
        if not with_workload:
            return job
        workload = workload_from_job(job)
        workload["metadata"]["creationTimestamp"] = stamp(created)
        workload["metadata"]["uid"] = f"wl-{name}"
        if priority is not None:
            workload["spec"]["priority"] = priority
        if admitted is not None:
            cluster_queue, flavor = admitted
            at = stamp(created + timedelta(seconds=1))
            workload["status"] = {
                "admission": {
                    "clusterQueue": cluster_queue,
                    "podSetAssignments": [
                        {
                            "name": pod_set,
                            "count": 1,
                            "flavors": {"cpu": flavor},
                            "resourceUsage": {"cpu": cpu},
                        }
                    ],
                },
                "conditions": [
                    {
                        "type": "QuotaReserved",
                        "status": "True",
                        "reason": "QuotaReserved",
                        "message": f"Quota reserved in ClusterQueue {cluster_queue}",
                        "lastTransitionTime": at,
                    },
                    {
                        "type": "Admitted",
                        "status": "True",
                        "reason": "Admitted",
                        "message": "The workload is admitted",
                        "lastTransitionTime": at,
                    },
                ],
            }
            if finished:
                workload["status"]["conditions"].append(
                    {
                        "type": "Finished",
                        "status": "True",
                        "reason": "Succeeded",
                        "message": "Job finished successfully",
                        "lastTransitionTime": stamp(created + timedelta(seconds=30)),
                    }
                )
        self.objects.workloads.append(workload)
        return workload

    def pending_message(self, workload: dict[str, Any], message: str) -> None:
        """The ``QuotaReserved=False`` condition the live scheduler writes on a pending Workload."""
        workload["status"] = {
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "False",
                    "reason": "Pending",
                    "message": message,
                    "lastTransitionTime": stamp(T0),
                }
            ]
        }


def research_pool(namespace: str = "team") -> LiveCluster:
    """The seed's on-demand/spot example, small: 2 cpu on demand, then 2 cpu spot."""
    return (
        LiveCluster()
        .flavor("ondemand", {"instance-type": "ondemand"})
        .flavor("spot", {"instance-type": "spot"}, taint=True)
        .cluster_queue("research-pool", [("ondemand", {"cpu": "2"}), ("spot", {"cpu": "2"})])
        .local_queue(namespace, "user-queue", "research-pool")
    )
