"""Builders of the workload kinds kuota queues: batch Job, JobSet, Deployment, StatefulSet.

    job("train", "ml").queue("user-queue").parallelism(2).requests(cpu="1")
    jobset("train", "ml").replicated_job("workers", replicas=3, parallelism=2)

Each has one container ``c`` (image ``busybox``) in its pod template; the setters of
:class:`~tests.builders.pods.PodTemplate` act on that template (for a JobSet: on the
template of its last replicated job).
"""

from __future__ import annotations

import copy
from typing import Any, Self

from tests.builders.base import ObjectBuilder
from tests.builders.core import QUEUE_LABEL
from tests.builders.pods import PodTemplate, container

PREBUILT_WORKLOAD = "kueue.x-k8s.io/prebuilt-workload-name"


class _Queued(ObjectBuilder, PodTemplate):
    def queue(self, name: str) -> Self:
        """The ``kueue.x-k8s.io/queue-name`` label."""
        return self.labels({QUEUE_LABEL: name})

    def prebuilt_workload(self, name: str) -> Self:
        return self.labels({PREBUILT_WORKLOAD: name})


class job(_Queued):  # noqa: N801 - reads like a manifest
    """A batch/v1 Job: suspended, parallelism and completions 1, restartPolicy Never."""

    api_version = "batch/v1"
    kind = "Job"

    def __init__(self, name: str = "job", namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {
            "parallelism": 1,
            "completions": 1,
            "suspend": True,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [container(requests={})]}
            },
        }

    def _template(self) -> dict[str, Any]:
        return self.raw["spec"].setdefault("template", {})  # type: ignore[no-any-return]

    def suspend(self, value: bool | None = True) -> Self:
        """``spec.suspend``; ``None`` leaves it out."""
        if value is None:
            self.raw["spec"].pop("suspend", None)
        else:
            self.raw["spec"]["suspend"] = value
        return self

    def parallelism(self, value: int | None) -> Self:
        """``spec.parallelism``; ``None`` leaves it out."""
        return self._count("parallelism", value)

    def completions(self, value: int | None) -> Self:
        """``spec.completions``; ``None`` leaves it out."""
        return self._count("completions", value)

    def _count(self, field: str, value: int | None) -> Self:
        if value is None:
            self.raw["spec"].pop(field, None)
        else:
            self.raw["spec"][field] = value
        return self

    def finished(self, kind: str = "Complete", message: str = "done") -> Self:
        """A ``Complete`` (or ``Failed``) condition in the Job's status."""
        self.raw.setdefault("status", {}).setdefault("conditions", []).append(
            {"type": kind, "status": "True", "message": message}
        )
        return self

    def server_defaults(self) -> Self:
        """The fields the API server fills in on create (as a webhook receives the Job)."""
        spec = self.raw["spec"]
        for field, value in {
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "manualSelector": False,
            "podReplacementPolicy": "TerminatingOrFailed",
        }.items():
            spec.setdefault(field, value)
        self.metadata.setdefault("creationTimestamp", None)
        template = self._template()
        template.setdefault("metadata", {}).setdefault("creationTimestamp", None)
        pod_spec = template["spec"]
        for field, value in {
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "securityContext": {},
            "schedulerName": "default-scheduler",
        }.items():
            pod_spec.setdefault(field, value)
        for item in pod_spec.get("containers", []):
            item.setdefault("terminationMessagePath", "/dev/termination-log")
            item.setdefault("terminationMessagePolicy", "File")
            item.setdefault("imagePullPolicy", "Always")
        self.raw.setdefault("status", {})
        return self


class jobset(_Queued):  # noqa: N801
    """A ``jobset.x-k8s.io/v1alpha2`` JobSet, suspended, with no replicated job yet."""

    api_version = "jobset.x-k8s.io/v1alpha2"
    kind = "JobSet"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {"suspend": True, "replicatedJobs": []}

    def suspend(self, value: bool | None = True) -> Self:
        if value is None:
            self.raw["spec"].pop("suspend", None)
        else:
            self.raw["spec"]["suspend"] = value
        return self

    def replicated_job(
        self,
        name: str,
        *,
        replicas: int | None = 1,
        parallelism: int | None = None,
        completions: int | None = None,
        job_spec: dict[str, Any] | None = None,
    ) -> Self:
        """Add a replicated job; its pod template has one container ``c``.

        ``replicas``/``parallelism``/``completions`` of ``None`` leave the field out.
        """
        spec: dict[str, Any] = (
            copy.deepcopy(job_spec)
            if job_spec is not None
            else {"template": {"spec": {"containers": [container(requests={})]}}}
        )
        if parallelism is not None:
            spec["parallelism"] = parallelism
        if completions is not None:
            spec["completions"] = completions
        item: dict[str, Any] = {"name": name, "template": {"spec": spec}}
        if replicas is not None:
            item["replicas"] = replicas
        self.raw["spec"]["replicatedJobs"].append(item)
        return self

    def _template(self) -> dict[str, Any]:
        last = self.raw["spec"]["replicatedJobs"][-1]
        return last["template"]["spec"].setdefault("template", {})  # type: ignore[no-any-return]


class _Replicated(_Queued):
    def __init__(self, name: str, namespace: str = "default", replicas: int = 1) -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container(resources=False)]},
            },
        }

    def _template(self) -> dict[str, Any]:
        return self.raw["spec"]["template"]  # type: ignore[no-any-return]

    def replicas(self, count: int) -> Self:
        self.raw["spec"]["replicas"] = count
        return self


class deployment(_Replicated):  # noqa: N801
    """An ``apps/v1`` Deployment; its pods carry the label ``app=<name>``."""

    api_version = "apps/v1"
    kind = "Deployment"


class stateful_set(_Replicated):  # noqa: N801
    """An ``apps/v1`` StatefulSet; its pods carry the label ``app=<name>``."""

    api_version = "apps/v1"
    kind = "StatefulSet"

    def __init__(self, name: str, namespace: str = "default", replicas: int = 1) -> None:
        super().__init__(name, namespace, replicas)
        self.raw["spec"]["serviceName"] = name


class leader_worker_set(_Queued):  # noqa: N801
    """A ``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet: one group of one pod, no leader template.

    The pod-template setters act on the worker template; ``leader_template()``
    adds a leader template (a copy of the worker one), after which they act on it.
    """

    api_version = "leaderworkerset.x-k8s.io/v1"
    kind = "LeaderWorkerSet"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": 1,
                "workerTemplate": {"spec": {"containers": [container(requests={})]}},
            },
        }
        self._target = "workerTemplate"

    def _template(self) -> dict[str, Any]:
        return self.raw["spec"]["leaderWorkerTemplate"][self._target]  # type: ignore[no-any-return]

    def replicas(self, count: int) -> Self:
        self.raw["spec"]["replicas"] = count
        return self

    def size(self, count: int) -> Self:
        self.raw["spec"]["leaderWorkerTemplate"]["size"] = count
        return self

    def leader_template(self) -> Self:
        """Add a leader template (a copy of the worker template); setters then act on it."""
        template = self.raw["spec"]["leaderWorkerTemplate"]
        template["leaderTemplate"] = copy.deepcopy(template["workerTemplate"])
        self._target = "leaderTemplate"
        return self

    def worker_template(self) -> Self:
        """Setters act on the worker template again."""
        self._target = "workerTemplate"
        return self

    def ready_replicas(self, count: int) -> Self:
        self.raw.setdefault("status", {})["readyReplicas"] = count
        return self


def _ray_cluster_spec() -> dict[str, Any]:
    return {
        "headGroupSpec": {
            "rayStartParams": {},
            "template": {"spec": {"containers": [container(name="ray-head", requests={})]}},
        },
        "workerGroupSpecs": [],
    }


class _RayKind(_Queued):
    """Setters on a Ray cluster spec; the pod-template setters act on its last group (the head
    until a worker group is added)."""

    def _cluster(self) -> dict[str, Any]:
        raise NotImplementedError

    def _template(self) -> dict[str, Any]:
        groups = self._cluster()["workerGroupSpecs"]
        if groups:
            return groups[-1]["template"]  # type: ignore[no-any-return]
        return self._cluster()["headGroupSpec"]["template"]  # type: ignore[no-any-return]

    def worker_group(
        self, name: str, *, replicas: int | None = 1, hosts: int | None = None
    ) -> Self:
        """Add a worker group of one container ``c``; ``None`` leaves the field out."""
        group: dict[str, Any] = {
            "groupName": name,
            "rayStartParams": {},
            "template": {"spec": {"containers": [container(requests={})]}},
        }
        if replicas is not None:
            group["replicas"] = replicas
        if hosts is not None:
            group["numOfHosts"] = hosts
        self._cluster()["workerGroupSpecs"].append(group)
        return self

    def cluster_spec(self, **fields: Any) -> Self:
        """Cluster spec fields, verbatim (``enableInTreeAutoscaling``, ...)."""
        self._cluster().update(copy.deepcopy(fields))
        return self

    def suspend_field(self, value: bool) -> Self:
        """Where the kind keeps its suspend flag (a RayService: its cluster spec)."""
        target = self._cluster() if self.kind == "RayService" else self.raw["spec"]
        target["suspend"] = value
        return self


class ray_cluster(_RayKind):  # noqa: N801
    """A ``ray.io/v1`` RayCluster: a head (container ``ray-head``), suspended."""

    api_version = "ray.io/v1"
    kind = "RayCluster"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {**_ray_cluster_spec(), "suspend": True}

    def _cluster(self) -> dict[str, Any]:
        return self.raw["spec"]  # type: ignore[no-any-return]


class ray_job(_RayKind):  # noqa: N801
    """A ``ray.io/v1`` RayJob: suspended, its own cluster, shut down after it finishes."""

    api_version = "ray.io/v1"
    kind = "RayJob"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {
            "entrypoint": "python -c 'print(1)'",
            "suspend": True,
            "shutdownAfterJobFinishes": True,
            "rayClusterSpec": _ray_cluster_spec(),
        }

    def _cluster(self) -> dict[str, Any]:
        return self.raw["spec"]["rayClusterSpec"]  # type: ignore[no-any-return]

    def spec(self, **fields: Any) -> Self:
        """RayJob spec fields, verbatim (``submissionMode``, ``clusterSelector``, ...)."""
        self.raw["spec"].update(copy.deepcopy(fields))
        return self

    def deployment_status(self, status: str, job_status: str = "", message: str = "") -> Self:
        self.raw["status"] = {"jobDeploymentStatus": status, "jobStatus": job_status}
        if message:
            self.raw["status"]["message"] = message
        return self


class ray_service(_RayKind):  # noqa: N801
    """A ``ray.io/v1`` RayService: its cluster suspended."""

    api_version = "ray.io/v1"
    kind = "RayService"

    def __init__(self, name: str, namespace: str = "default") -> None:
        super().__init__(name, namespace)
        self.raw["spec"] = {"rayClusterConfig": {**_ray_cluster_spec(), "suspend": True}}

    def _cluster(self) -> dict[str, Any]:
        return self.raw["spec"]["rayClusterConfig"]  # type: ignore[no-any-return]


class kubeflow_job(_Queued):  # noqa: N801
    """A Kubeflow training job (``MPIJob`` by default), suspended, with no replica yet.

    ``kubeflow_job("train", kind="PyTorchJob")``; the pod-template setters act on
    the last replica added.
    """

    KINDS: dict[str, tuple[str, str]] = {
        "MPIJob": ("kubeflow.org/v2beta1", "mpiReplicaSpecs"),
        "PyTorchJob": ("kubeflow.org/v1", "pytorchReplicaSpecs"),
        "JAXJob": ("kubeflow.org/v1", "jaxReplicaSpecs"),
    }

    def __init__(self, name: str, namespace: str = "default", *, kind: str = "MPIJob") -> None:
        super().__init__(name, namespace)
        self.api_version, self.specs_field = self.KINDS[kind]
        self.kind = kind
        self.raw["apiVersion"], self.raw["kind"] = self.api_version, kind
        self.raw["spec"] = {"runPolicy": {"suspend": True}, self.specs_field: {}}
        self._last = ""

    def replica(self, replica_type: str, replicas: int | None = 1) -> Self:
        """Add a replica type with one container ``c``; ``None`` leaves ``replicas`` out."""
        spec: dict[str, Any] = {"template": {"spec": {"containers": [container(requests={})]}}}
        if replicas is not None:
            spec["replicas"] = replicas
        self.raw["spec"][self.specs_field][replica_type] = spec
        self._last = replica_type
        return self

    def run_policy(self, **fields: Any) -> Self:
        self.raw["spec"]["runPolicy"].update(copy.deepcopy(fields))
        return self

    def _template(self) -> dict[str, Any]:
        return self.raw["spec"][self.specs_field][self._last]["template"]  # type: ignore[no-any-return]
