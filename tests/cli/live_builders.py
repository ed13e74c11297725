"""Raw API dicts as a live cluster returns them, for the tests of the live commands.

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
from scheduler.jobs import JOBSET, workload_from_job

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class LiveCluster:
    def __init__(self) -> None:
        self.objects = ClusterObjects()
        self._serial = 0

    def flavor(self, name: str, labels: dict[str, str], taint: bool = False) -> LiveCluster:
        spec: dict[str, Any] = {"nodeLabels": labels}
        if taint:
            spec["nodeTaints"] = [{"key": "spot", "value": "true", "effect": "NoSchedule"}]
        self.objects.resource_flavors.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": name, "uid": f"rf-{name}"},
                "spec": spec,
            }
        )
        return self

    def cluster_queue(
        self,
        name: str,
        quotas: list[tuple[str, dict[str, str]]],
        *,
        cohort: str | None = None,
    ) -> LiveCluster:
        covered = sorted({resource for _, resources in quotas for resource in resources})
        spec: dict[str, Any] = {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": covered,
                    "flavors": [
                        {
                            "name": flavor,
                            "resources": [
                                {"name": r, "nominalQuota": q} for r, q in resources.items()
                            ],
                        }
                        for flavor, resources in quotas
                    ],
                }
            ],
        }
        if cohort:
            spec["cohortName"] = cohort
        self.objects.cluster_queues.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": name, "uid": f"cq-{name}"},
                "spec": spec,
            }
        )
        return self

    def local_queue(self, namespace: str, name: str, cluster_queue: str) -> LiveCluster:
        self.objects.local_queues.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"clusterQueue": cluster_queue},
            }
        )
        if not any(ns["metadata"]["name"] == namespace for ns in self.objects.namespaces):
            self.objects.namespaces.append(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {
                        "name": namespace,
                        "labels": {"kubernetes.io/metadata.name": namespace},
                    },
                }
            )
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
        pod_spec: dict[str, Any] = {
            "restartPolicy": "Never",
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
            ],
        }
        if tolerate_spot:
            pod_spec["tolerations"] = [
                {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}
            ]
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-{name}",
                "creationTimestamp": stamp(created),
                "labels": {"kueue.x-k8s.io/queue-name": queue},
            },
            "spec": {
                "parallelism": 1,
                "completions": 1,
                "suspend": admitted is None,
                "template": {"spec": pod_spec},
            },
        }
        pod_set = "main"
        if kind == "JobSet":
            pod_set = "workers"
            job["apiVersion"], job["kind"] = JOBSET.api_version, JOBSET.kind
            job["spec"] = {
                "suspend": admitted is None,
                "replicatedJobs": [
                    {"name": pod_set, "replicas": 1, "template": {"spec": job["spec"]}}
                ],
            }
            del job["spec"]["replicatedJobs"][0]["template"]["spec"]["suspend"]
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
