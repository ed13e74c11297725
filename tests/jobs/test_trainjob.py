"""TrainJobs (docs/concepts.md#trainjob): the JobSet Trainer v2.2.1 makes from a TrainJob and
its runtime, kuota's runtime patch, start, stop, end, MultiKueue and the webhook's rules.

Expected values come from Kubeflow Trainer v2.2.1 (``newRuntimeInfo``, the ML policy
plugins' ``EnforceMLPolicy``, the JobSet builder's ``Trainer``/``Initializer``, its shipped
runtimes) and from Kueue v0.19.2's ``pkg/controller/jobs/trainjob`` tests.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.jobs import (
    PodSetInfo,
    ReclaimableCount,
    Reference,
    ResolvedThroughReference,
    by_framework,
    capability,
    for_object,
)
from scheduler.jobs.actions import CreateWorkload, StartJob
from scheduler.jobs.controller import next_action
from scheduler.jobs.multikueue_copy import with_managed_by
from scheduler.jobs.protocol import NO_FACTS, AdmissionFacts
from scheduler.jobs.start_placement import FlavorPlacement
from scheduler.jobs.trainjob import KUEUE_PATCH_MANAGER, TRAINJOB
from scheduler.jobs.trainjob.integration import RESOLVED_RUNTIME
from scheduler.jobs.trainjob.patches import strategic_merge
from tests.jobs.sample import admitted_workload

API_VERSION = "trainer.kubeflow.org/v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
QUEUE = "kueue.x-k8s.io/queue-name"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
HINT = (
    '. Adjust either the "TrainJob.spec.runtimePatches" or the "TrainingRuntime.Template" '
    "annotations for the corresponding Job"
)
SPOT = {
    "spot": FlavorPlacement({"instance-type": "spot"}, ({"key": "spot", "operator": "Exists"},))
}


# -- runtimes, as Trainer v2.2.1 ships them (manifests/base/runtimes) ------------------------


TORCH_IMAGE = "pytorch/pytorch:2.10.0-cuda12.8-cudnn9-runtime"
DEEPSPEED_IMAGE = "ghcr.io/kubeflow/trainer/deepspeed-runtime"


def container(name: str, image: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": image, **fields}


def replicated(
    name: str,
    *containers: dict[str, Any],
    ancestor: str | None = None,
    replicas: int | None = None,
    **job_spec: Any,
) -> dict[str, Any]:
    """One replicated job of a runtime's JobSet template."""
    pod_template = {"spec": {"containers": list(containers)}}
    template: dict[str, Any] = {"spec": {**job_spec, "template": pod_template}}
    if ancestor is not None:
        template["metadata"] = {"labels": {ANCESTOR: ancestor}}
    job: dict[str, Any] = {"name": name, "template": template}
    if replicas is not None:
        job["replicas"] = replicas
    return job


def runtime(
    *jobs: dict[str, Any],
    name: str = "custom",
    ml_policy: dict[str, Any] | None = None,
    **template_spec: Any,
) -> dict[str, Any]:
    """A ClusterTrainingRuntime of these replicated jobs."""
    spec: dict[str, Any] = {"template": {"spec": {**template_spec, "replicatedJobs": list(jobs)}}}
    if ml_policy is not None:
        spec["mlPolicy"] = ml_policy
    metadata = {"name": name}
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterTrainingRuntime",
        "metadata": metadata,
        "spec": spec,
    }


def torch_distributed(num_nodes: int = 1) -> dict[str, Any]:
    """ClusterTrainingRuntime ``torch-distributed`` (its ``mlPolicy.numNodes`` settable)."""
    return runtime(
        replicated("node", container("node", TORCH_IMAGE), ancestor="trainer"),
        name="torch-distributed",
        ml_policy={"numNodes": num_nodes, "torch": {}},
    )


def deepspeed_distributed(*, launcher_as_node: bool = True) -> dict[str, Any]:
    """ClusterTrainingRuntime ``deepspeed-distributed``: an MPI launcher (the trainer step)
    and the replicated job ``node`` of workers."""
    security = {"securityContext": {"runAsUser": 1000}}
    sshd = container(
        "node",
        DEEPSPEED_IMAGE,
        command=["/usr/sbin/sshd"],
        args=["-De", "-f", "/home/mpiuser/.sshd_config"],
        readinessProbe={"tcpSocket": {"port": 2222}, "initialDelaySeconds": 5},
        **security,
    )
    mpi = {
        "numProcPerNode": 1,
        "mpiImplementation": "OpenMPI",
        "sshAuthMountPath": "/home/mpiuser/.ssh",
        "runLauncherAsNode": launcher_as_node,
    }
    return runtime(
        replicated("launcher", container("node", DEEPSPEED_IMAGE, **security), ancestor="trainer"),
        replicated("node", sshd),
        name="deepspeed-distributed",
        ml_policy={"numNodes": 1, "mpi": mpi},
        network={"publishNotReadyAddresses": True},
        successPolicy={"operator": "All", "targetReplicatedJobs": ["launcher"]},
    )


def node_spec(ctr: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """The pod spec of a runtime's replicated job (to edit)."""
    job = ctr["spec"]["template"]["spec"]["replicatedJobs"][index]
    spec: dict[str, Any] = job["template"]["spec"]["template"]["spec"]
    return spec


def with_initializers() -> dict[str, Any]:
    """A runtime with dataset and model initializers before the trainer (as torchtune's)."""
    volume = {"volumeMounts": [{"mountPath": "/workspace", "name": "initializer"}]}
    return runtime(
        replicated(
            "dataset-initializer",
            container(
                "dataset-initializer",
                "ghcr.io/kubeflow/trainer/dataset-initializer",
                env=[{"name": "STORAGE_URI", "value": "hf://tatsu-lab/alpaca"}],
                resources={"requests": {"cpu": "2"}},
                **volume,
            ),
            ancestor="dataset-initializer",
            replicas=2,
        ),
        replicated(
            "model-initializer",
            container(
                "model-initializer",
                "ghcr.io/kubeflow/trainer/model-initializer",
                resources={"requests": {"cpu": "3"}},
                **volume,
            ),
            ancestor="model-initializer",
        ),
        replicated(
            "node",
            container(
                "node",
                "ghcr.io/kubeflow/trainer/torchtune-trainer",
                resources={"limits": {"nvidia.com/gpu": 2}},
                **volume,
            ),
            ancestor="trainer",
            replicas=3,
        ),
        name="torchtune-llama3.2-1b",
        ml_policy={"numNodes": 1, "torch": {}},
    )


# -- TrainJobs ---------------------------------------------------------------------------------


def trainjob(
    runtime_name: str = "torch-distributed",
    *,
    trainer: dict[str, Any] | None = None,
    patches: list[dict[str, Any]] | None = None,
    kind: str | None = None,
    api_group: str | None = None,
    queue: str | None = "lq",
    suspend: bool | None = True,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """TrainJob ``team-a/train`` (uid ``uid-train``) naming ``runtime_name``."""
    ref: dict[str, Any] = {"name": runtime_name}
    if kind is not None:
        ref["kind"] = kind
    if api_group is not None:
        ref["apiGroup"] = api_group
    spec: dict[str, Any] = {"runtimeRef": ref}
    if suspend is not None:
        spec["suspend"] = suspend
    if trainer is not None:
        spec["trainer"] = trainer
    if patches is not None:
        spec["runtimePatches"] = patches
    metadata: dict[str, Any] = {"name": "train", "namespace": "team-a", "uid": "uid-train"}
    if queue is not None:
        metadata["labels"] = {QUEUE: queue}
    job: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "TrainJob",
        "metadata": metadata,
        "spec": spec,
    }
    if status is not None:
        job["status"] = status
    return job


def job_patch(
    name: str, pod_template: dict[str, Any], *, manager: str = "example.com/user-manager"
) -> dict[str, Any]:
    """A runtime patch of ``manager`` that patches the pod template of replicated job ``name``."""
    return {
        "manager": manager,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {"name": name, "template": {"spec": {"template": pod_template}}}
                    ]
                }
            }
        },
    }


def resolved(job: dict[str, Any], against: dict[str, Any] | None = None) -> dict[str, Any]:
    return TRAINJOB.resolved(job, torch_distributed() if against is None else against)


def counts(job: dict[str, Any]) -> list[tuple[str, int]]:
    return [(p["name"], p["count"]) for p in TRAINJOB.pod_sets(job)]


def pod_spec(job: dict[str, Any], pod_set: str) -> dict[str, Any]:
    found = next(p for p in TRAINJOB.pod_sets(job) if p["name"] == pod_set)
    spec: dict[str, Any] = found["template"]["spec"]
    return spec


def containers(job: dict[str, Any], pod_set: str) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in pod_spec(job, pod_set)["containers"]}


def kueue_patch(job: dict[str, Any]) -> dict[str, Any]:
    patches: list[dict[str, Any]] = job["spec"]["runtimePatches"]
    (found,) = [p for p in patches if p["manager"] == KUEUE_PATCH_MANAGER]
    return found


# -- the kind ----------------------------------------------------------------------------------


def test_the_kind_is_registered_under_its_framework_name_and_resolved_through_its_runtime() -> None:
    assert by_framework("trainer.kubeflow.org/trainjob") is TRAINJOB
    assert for_object(trainjob()) is TRAINJOB
    assert TRAINJOB.queue_name(trainjob()) == "lq"
    assert isinstance(capability(TRAINJOB, ResolvedThroughReference), type(TRAINJOB))
    assert {(k.kind, k.resource) for k in TRAINJOB.referenced_kinds} == {
        ("ClusterTrainingRuntime", "clustertrainingruntimes"),
        ("TrainingRuntime", "trainingruntimes"),
    }


def test_a_trainjob_names_a_cluster_runtime_by_default_or_a_runtime_of_its_namespace() -> None:
    assert TRAINJOB.reference(trainjob()) == Reference(
        API_VERSION, "ClusterTrainingRuntime", "torch-distributed", None
    )
    explicit = trainjob(kind="ClusterTrainingRuntime", api_group="trainer.kubeflow.org")
    assert TRAINJOB.reference(explicit) == TRAINJOB.reference(trainjob())
    assert TRAINJOB.reference(trainjob("mine", kind="TrainingRuntime")) == Reference(
        API_VERSION, "TrainingRuntime", "mine", "team-a"
    )


@pytest.mark.parametrize(
    "job",
    [
        trainjob(api_group="example.com"),
        trainjob(api_group=""),
        trainjob(kind="JobSet"),
        trainjob(""),
        {"apiVersion": API_VERSION, "kind": "TrainJob", "metadata": {"name": "t"}, "spec": {}},
    ],
    ids=["other-group", "empty-group", "other-kind", "no-name", "no-runtime-ref"],
)
def test_a_trainjob_naming_no_runtime_of_trainers_has_no_reference(job: dict[str, Any]) -> None:
    assert TRAINJOB.reference(job) is None


def test_an_unresolved_trainjob_has_no_pod_sets_and_nothing_ready_or_reclaimable() -> None:
    job = trainjob(status={"jobsStatus": [{"name": "node", "ready": 1, "succeeded": 1}]})
    assert TRAINJOB.pod_sets(job) == []
    assert TRAINJOB.pods_ready(job) is False
    assert TRAINJOB.reclaimable_pods(job) == []


def test_resolving_copies_the_runtime_spec_without_touching_either_object() -> None:
    job, ctr = trainjob(), torch_distributed()
    before_job, before_runtime = copy.deepcopy(job), copy.deepcopy(ctr)
    result = TRAINJOB.resolved(job, ctr)
    assert (job, ctr) == (before_job, before_runtime)
    assert result[RESOLVED_RUNTIME] == ctr["spec"]
    assert {k: v for k, v in result.items() if k != RESOLVED_RUNTIME} == job
    result[RESOLVED_RUNTIME]["mlPolicy"]["numNodes"] = 9
    assert ctr["spec"]["mlPolicy"]["numNodes"] == 1, "a copy, not the runtime"


# -- pod sets: torch ---------------------------------------------------------------------------


def test_torch_nodes_come_from_the_runtimes_ml_policy_then_from_the_trainjob() -> None:
    assert counts(resolved(trainjob())) == [("node", 1)]
    assert counts(resolved(trainjob(), torch_distributed(num_nodes=2))) == [("node", 2)]
    assert counts(resolved(trainjob(trainer={"numNodes": 3}))) == [("node", 3)]
    assert counts(resolved(trainjob(trainer={"numNodes": 5}), torch_distributed(num_nodes=2))) == [
        ("node", 5)
    ]


def test_the_pod_set_is_numbered_as_a_jobsets() -> None:
    (pod_set,) = TRAINJOB.pod_sets(resolved(trainjob(trainer={"numNodes": 2})))
    assert pod_set["topologyRequest"] == {
        "podIndexLabel": "batch.kubernetes.io/job-completion-index",
        "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
        "subGroupCount": 1,
    }


def test_the_trainer_overrides_the_node_container_of_the_trainer_step() -> None:
    ctr = torch_distributed()
    node = node_spec(ctr)
    node["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": "1"},
        "requests": {"cpu": "8", "memory": "16Gi"},
    }
    node["containers"][0]["env"] = [{"name": "FROM_RUNTIME", "value": "r"}]
    node["containers"].append(container("sidecar", "side", resources={"requests": {"cpu": "100m"}}))
    job = resolved(
        trainjob(
            trainer={
                "numNodes": 2,
                "image": "my/trainer:1",
                "command": ["torchrun"],
                "args": ["train.py", "--epochs=3"],
                "env": [{"name": "LR", "value": "0.1"}],
                "resourcesPerNode": {"requests": {"cpu": "2", "memory": "4Gi"}},
            }
        ),
        ctr,
    )
    found = containers(job, "node")
    assert found["node"]["image"] == "my/trainer:1"
    assert found["node"]["command"] == ["torchrun"]
    assert found["node"]["args"] == ["train.py", "--epochs=3"]
    assert found["node"]["resources"] == {"requests": {"cpu": "2", "memory": "4Gi"}}, (
        "resourcesPerNode replaces the container's resources: the runtime's GPU limit is gone"
    )
    assert found["node"]["env"] == [
        {"name": "FROM_RUNTIME", "value": "r"},
        {"name": "LR", "value": "0.1"},
    ]
    assert found["sidecar"] == container("sidecar", "side", resources={"requests": {"cpu": "100m"}})


def test_without_resources_per_node_the_runtimes_resources_stay() -> None:
    ctr = torch_distributed()
    node = node_spec(ctr)
    node["containers"][0]["resources"] = {"requests": {"cpu": "8"}}
    trainers: tuple[dict[str, Any] | None, ...] = (
        None,
        {"numNodes": 2},
        {"resourcesPerNode": {}},
        {"resourcesPerNode": {"limits": {}}},
    )
    for trainer in trainers:
        job = resolved(trainjob(trainer=trainer), ctr)
        assert containers(job, "node")["node"]["resources"] == {"requests": {"cpu": "8"}}, trainer


def test_the_trainjobs_env_replaces_a_runtime_variable_of_the_same_name_where_it_stands() -> None:
    """Trainer upserts ``trainer.env`` into the node container (``apply.UpsertEnvVars``): a
    variable the runtime already has keeps its place and takes the TrainJob's value."""
    ctr = torch_distributed()
    node = node_spec(ctr)
    node["containers"][0]["env"] = [{"name": "E1", "value": "r"}, {"name": "E2", "value": "r"}]
    env = [{"name": "E1", "value": "t"}, {"name": "E3", "value": "t"}]
    job = resolved(trainjob(trainer={"env": env}), ctr)
    assert containers(job, "node")["node"]["env"] == [
        {"name": "E1", "value": "t"},
        {"name": "E2", "value": "r"},
        {"name": "E3", "value": "t"},
    ]


def test_without_an_ml_policy_the_trainer_step_runs_its_parallelism_or_the_trainjobs_nodes() -> (
    None
):
    """Kueue's TestReconciler: a runtime of ``node`` (the trainer step) and ``foo``."""
    ctr = runtime(
        replicated(
            "node",
            container("node", "i"),
            ancestor="trainer",
            replicas=1,
            parallelism=1,
            completions=1,
        ),
        replicated("foo", container("foo", "i"), replicas=1, parallelism=1, completions=1),
    )
    assert counts(resolved(trainjob(), ctr)) == [("node", 1), ("foo", 1)]
    assert counts(resolved(trainjob(trainer={"numNodes": 2}), ctr)) == [("node", 2), ("foo", 1)]


def test_each_replicated_job_runs_its_parallelism_as_completions_times_its_replicas() -> None:
    ctr = runtime(
        replicated("node", container("node", "i"), ancestor="trainer", replicas=3),
        replicated("aux", container("aux", "i"), replicas=2, parallelism=3, completions=5),
        ml_policy={"numNodes": 2, "torch": {}},
    )
    job = resolved(trainjob(), ctr)
    assert counts(job) == [("node", 2), ("aux", 6)], "the trainer step runs one replica"
    child = {p["name"]: p for p in TRAINJOB.pod_sets(job)}
    assert child["aux"]["topologyRequest"]["subGroupCount"] == 2


# -- pod sets: MPI -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trainer", "wanted"),
    [
        (None, [("launcher", 1), ("node", 1)]),
        ({"numNodes": 4}, [("launcher", 1), ("node", 3)]),
        ({"numNodes": 2}, [("launcher", 1), ("node", 1)]),
        ({"numNodes": 1}, [("launcher", 1), ("node", 1)]),
    ],
)
def test_an_mpi_launcher_run_as_a_node_counts_as_one_of_the_trainjobs_nodes(
    trainer: dict[str, Any] | None, wanted: list[tuple[str, int]]
) -> None:
    assert (
        counts(
            resolved(trainjob("deepspeed-distributed", trainer=trainer), deepspeed_distributed())
        )
        == wanted
    )


def test_an_mpi_launcher_not_run_as_a_node_leaves_every_node_to_the_workers() -> None:
    job = trainjob(
        "deepspeed-distributed",
        trainer={"numNodes": 4, "resourcesPerNode": {"requests": {"cpu": "1"}}},
    )
    resolved_job = resolved(job, deepspeed_distributed(launcher_as_node=False))
    assert counts(resolved_job) == [("launcher", 1), ("node", 4)]
    assert containers(resolved_job, "launcher")["node"]["resources"] == {"requests": {"cpu": "1"}}
    assert "resources" not in containers(resolved_job, "node")["node"], "only the trainer step's"


def test_an_mpi_launcher_run_as_a_node_gives_the_workers_the_trainers_resources_too() -> None:
    job = trainjob(
        "deepspeed-distributed",
        trainer={
            "numNodes": 4,
            "image": "my/deepspeed:1",
            "env": [{"name": "A", "value": "1"}],
            "resourcesPerNode": {"requests": {"cpu": "2"}, "limits": {"nvidia.com/gpu": "1"}},
        },
    )
    resolved_job = resolved(job, deepspeed_distributed())
    launcher, node = (
        containers(resolved_job, "launcher")["node"],
        containers(resolved_job, "node")["node"],
    )
    wanted = {"requests": {"cpu": "2"}, "limits": {"nvidia.com/gpu": "1"}}
    assert launcher["resources"] == node["resources"] == wanted
    assert launcher["env"] == node["env"] == [{"name": "A", "value": "1"}]
    assert launcher["image"] == "my/deepspeed:1"
    assert node["image"] == "ghcr.io/kubeflow/trainer/deepspeed-runtime", "only the trainer step's"
    assert node["command"] == ["/usr/sbin/sshd"]


# -- pod sets: initializers --------------------------------------------------------------------


def test_initializers_run_one_replica_and_keep_their_own_containers() -> None:
    job = resolved(
        trainjob(
            "torchtune-llama3.2-1b",
            trainer={"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": "4"}}},
        ),
        with_initializers(),
    )
    assert counts(job) == [("dataset-initializer", 1), ("model-initializer", 1), ("node", 2)]
    dataset = containers(job, "dataset-initializer")["dataset-initializer"]
    assert dataset["resources"] == {"requests": {"cpu": "2"}}, "not the trainer's"
    assert containers(job, "model-initializer")["model-initializer"]["resources"] == {
        "requests": {"cpu": "3"}
    }
    assert containers(job, "node")["node"]["resources"] == {"limits": {"nvidia.com/gpu": "4"}}


# -- runtime patches ---------------------------------------------------------------------------


def runtime_with_placement() -> dict[str, Any]:
    ctr = torch_distributed()
    spec = node_spec(ctr)
    spec["nodeSelector"] = {"a": "1", "b": "2"}
    spec["tolerations"] = [{"key": "x", "operator": "Exists"}]
    spec["containers"][0]["env"] = [{"name": "E1", "value": "r"}]
    spec["containers"].append(container("sidecar", "side", env=[{"name": "S1", "value": "r"}]))
    return ctr


def test_runtime_patches_are_merged_into_the_replicated_job_of_their_name() -> None:
    patch = job_patch(
        "node",
        {
            "metadata": {"labels": {"team": "ml"}, "annotations": {"note": "x"}},
            "spec": {
                "nodeSelector": {"c": "3"},
                "tolerations": [{"key": "y", "operator": "Exists"}],
                "containers": [
                    {
                        "name": "sidecar",
                        "env": [{"name": "S1", "value": "p"}, {"name": "S2", "value": "p"}],
                    }
                ],
            },
        },
    )
    job = resolved(trainjob(patches=[patch]), runtime_with_placement())
    spec = pod_spec(job, "node")
    assert spec["nodeSelector"] == {"a": "1", "b": "2", "c": "3"}, "maps merge"
    assert spec["tolerations"] == [{"key": "y", "operator": "Exists"}], "tolerations are replaced"
    found = {c["name"]: c for c in spec["containers"]}
    assert set(found) == {"node", "sidecar"}, "containers merge by name"
    assert found["node"]["env"] == [{"name": "E1", "value": "r"}]
    assert {e["name"]: e["value"] for e in found["sidecar"]["env"]} == {"S1": "p", "S2": "p"}, (
        "env merges by name"
    )
    assert found["sidecar"]["image"] == "side"
    (pod_set,) = TRAINJOB.pod_sets(job)
    assert pod_set["template"]["metadata"] == {
        "labels": {"team": "ml"},
        "annotations": {"note": "x"},
    }


def test_patches_apply_in_order_and_a_patch_for_another_job_is_ignored() -> None:
    first = job_patch("node", {"spec": {"nodeSelector": {"y": "1"}}})
    second = job_patch(
        "node", {"spec": {"nodeSelector": {"y": "2", "w": "3"}}}, manager=KUEUE_PATCH_MANAGER
    )
    other = job_patch("launcher", {"spec": {"nodeSelector": {"z": "9"}}})
    job = resolved(trainjob(patches=[first, other, second]))
    assert pod_spec(job, "node")["nodeSelector"] == {"y": "2", "w": "3"}
    assert counts(job) == [("node", 1)]


def test_a_patch_without_a_template_or_replicated_jobs_changes_nothing() -> None:
    patches: list[dict[str, Any]] = [
        {"manager": "a"},
        {"manager": "b", "trainingRuntimeSpec": {"template": {"spec": {}}}},
        {
            "manager": "c",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node"}]}}},
        },
    ]
    plain = TRAINJOB.pod_sets(resolved(trainjob()))
    assert TRAINJOB.pod_sets(resolved(trainjob(patches=patches))) == plain


def test_a_patched_resource_request_is_what_the_pod_set_asks_for() -> None:
    patch = job_patch(
        "node",
        {"spec": {"containers": [{"name": "node", "resources": {"requests": {"cpu": "3"}}}]}},
    )
    assert containers(resolved(trainjob(patches=[patch])), "node")["node"]["resources"] == {
        "requests": {"cpu": "3"}
    }
    wins = trainjob(patches=[patch], trainer={"resourcesPerNode": {"requests": {"cpu": "1"}}})
    assert containers(resolved(wins), "node")["node"]["resources"] == {"requests": {"cpu": "1"}}, (
        "resourcesPerNode is applied after the patches"
    )


def test_strategic_merge_follows_kubernetes_merge_keys_and_null_deletes() -> None:
    base = {
        "metadata": {"labels": {"l": "1"}},
        "spec": {
            "parallelism": 2,
            "template": {
                "spec": {
                    "nodeSelector": {"a": "1", "b": "2"},
                    "tolerations": [{"key": "x", "operator": "Exists"}],
                    "containers": [
                        {
                            "name": "a",
                            "image": "a",
                            "command": ["x", "y"],
                            "volumeMounts": [{"mountPath": "/w", "name": "v"}],
                        },
                        {"name": "b", "image": "b"},
                    ],
                    "volumes": [{"name": "v", "emptyDir": {}}],
                }
            },
        },
    }
    patch = {
        "metadata": {"labels": {"m": "2"}},
        "spec": {
            "parallelism": None,
            "template": {
                "spec": {
                    "nodeSelector": {"b": None, "c": "3"},
                    "tolerations": [{"key": "y", "operator": "Exists"}],
                    "containers": [
                        {
                            "name": "a",
                            "command": ["z"],
                            "volumeMounts": [{"mountPath": "/w", "readOnly": True}],
                        },
                        {"name": "c", "image": "c"},
                    ],
                    "volumes": [{"name": "v", "emptyDir": None, "configMap": {"name": "cm"}}],
                }
            },
        },
    }
    merged = strategic_merge(base, patch)
    assert merged["metadata"] == {"labels": {"l": "1", "m": "2"}}
    assert "parallelism" not in merged["spec"], "null deletes"
    spec = merged["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"a": "1", "c": "3"}
    assert spec["tolerations"] == [{"key": "y", "operator": "Exists"}]
    found = {c["name"]: c for c in spec["containers"]}
    assert found["a"] == {
        "name": "a",
        "image": "a",
        "command": ["z"],
        "volumeMounts": [{"mountPath": "/w", "name": "v", "readOnly": True}],
    }, "command is replaced, volume mounts merge by mountPath"
    assert found["b"] == {"name": "b", "image": "b"}
    assert found["c"] == {"name": "c", "image": "c"}
    assert spec["volumes"] == [{"name": "v", "configMap": {"name": "cm"}}]


JSON = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-5, max_value=5),
        st.text(alphabet="abnx", max_size=3),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(["name", "env", "containers", "nodeSelector", "a", "b", "value"]),
            children,
            max_size=4,
        ),
    ),
    max_leaves=20,
)
OBJECTS = st.dictionaries(
    st.sampled_from(["name", "env", "containers", "nodeSelector", "tolerations", "spec", "a"]),
    JSON,
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(base=OBJECTS, patch=OBJECTS)
def test_an_empty_patch_changes_nothing_and_merging_never_mutates_its_inputs(
    base: dict[str, Any], patch: dict[str, Any]
) -> None:
    assert strategic_merge(base, {}) == base
    before_base, before_patch = copy.deepcopy(base), copy.deepcopy(patch)
    merged = strategic_merge(base, patch)
    assert base == before_base and patch == before_patch
    if isinstance(merged, dict):
        for value in merged.values():
            if isinstance(value, (dict, list)):
                assert all(value is not known for known in (*base.values(), *patch.values()))


# -- kuota's runtime patch: default, start, restore --------------------------------------------


def test_default_adds_kuotas_runtime_patch_once_and_suspends_when_asked() -> None:
    user = job_patch("node", {"spec": {"nodeSelector": {"y": "1"}}})
    sent = trainjob(suspend=False, patches=[user])
    defaulted = TRAINJOB.default(sent, queue=None, suspend=True)
    assert defaulted["spec"]["suspend"] is True
    assert defaulted["spec"]["runtimePatches"] == [
        user,
        {"manager": KUEUE_PATCH_MANAGER, "trainingRuntimeSpec": {"template": {"spec": {}}}},
    ]
    assert TRAINJOB.default(defaulted, queue=None, suspend=True) == defaulted, "idempotent"
    assert sent["spec"]["runtimePatches"] == [user], "the argument is not mutated"
    unsuspended = TRAINJOB.default(trainjob(suspend=False), queue=None, suspend=False)
    assert unsuspended["spec"]["suspend"] is False
    assert unsuspended["metadata"]["labels"] == {QUEUE: "lq"}
    assert kueue_patch(unsuspended) == kueue_patch(defaulted)
    unqueued = TRAINJOB.default(trainjob(queue=None, suspend=None), queue="default", suspend=True)
    assert unqueued["metadata"]["labels"] == {QUEUE: "default"}
    assert len(unqueued["spec"]["runtimePatches"]) == 1


def test_suspend_and_is_suspended() -> None:
    running = trainjob(suspend=False)
    assert not TRAINJOB.is_suspended(running)
    assert not TRAINJOB.is_suspended(trainjob(suspend=None))
    suspended = TRAINJOB.suspend(running)
    assert TRAINJOB.is_suspended(suspended)
    assert not TRAINJOB.is_suspended(running), "the argument is not mutated"


TOLERATION = {"key": "t1k", "operator": "Equal", "value": "t1v", "effect": "NoExecute"}
INFO = PodSetInfo(
    "node",
    2,
    node_selector={"disktype": "ssd"},
    tolerations=(TOLERATION,),
    labels={"kueue.x-k8s.io/podset": "node", "test-label": "label"},
    annotations={"test-annotation": "test"},
    scheduling_gates=("test-scheduling-gate-1",),
)


def started(job: dict[str, Any]) -> dict[str, Any]:
    return TRAINJOB.run_with(job, [INFO])


def test_starting_writes_the_placement_into_kuotas_patch_and_unsuspends() -> None:
    """Kueue's TestRunWithPodsetsInfo: the user's patch is kept, kuota's gets the placement."""
    user = job_patch("node", {"spec": {"nodeSelector": {"disktype": "sdd"}}})
    job = resolved(TRAINJOB.default(trainjob(patches=[user]), queue=None, suspend=True))
    result = started(job)
    assert result["spec"]["suspend"] is False
    assert result["spec"]["runtimePatches"][0] == user
    assert kueue_patch(result) == {
        "manager": KUEUE_PATCH_MANAGER,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "spec": {
                                    "template": {
                                        "metadata": {
                                            "labels": {
                                                "kueue.x-k8s.io/podset": "node",
                                                "test-label": "label",
                                            },
                                            "annotations": {"test-annotation": "test"},
                                        },
                                        "spec": {
                                            "nodeSelector": {"disktype": "ssd"},
                                            "tolerations": [TOLERATION],
                                            "schedulingGates": [{"name": "test-scheduling-gate-1"}],
                                        },
                                    }
                                }
                            },
                        }
                    ]
                }
            }
        },
    }
    assert job["spec"]["suspend"] is True, "the argument is not mutated"
    spec = pod_spec(result, "node")
    assert spec["nodeSelector"] == {"disktype": "ssd"}, "kuota's patch comes after the user's"
    assert spec["tolerations"] == [TOLERATION]
    assert spec["schedulingGates"] == [{"name": "test-scheduling-gate-1"}]


def test_starting_again_replaces_kuotas_previous_placement() -> None:
    job = resolved(TRAINJOB.default(trainjob(), queue=None, suspend=True))
    first = TRAINJOB.run_with(job, [PodSetInfo("node", 1, node_selector={"old-selector": "value"})])
    second = TRAINJOB.run_with(
        TRAINJOB.suspend(first), [PodSetInfo("node", 1, node_selector={"new-selector": "value"})]
    )
    (entry,) = kueue_patch(second)["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert entry == {
        "name": "node",
        "template": {"spec": {"template": {"spec": {"nodeSelector": {"new-selector": "value"}}}}},
    }
    assert pod_spec(second, "node")["nodeSelector"] == {"new-selector": "value"}


def test_starting_a_trainjob_without_kuotas_patch_adds_it() -> None:
    result = started(resolved(trainjob()))
    assert len(result["spec"]["runtimePatches"]) == 1
    assert pod_spec(result, "node")["nodeSelector"] == {"disktype": "ssd"}


def test_restoring_clears_the_replicated_jobs_of_kuotas_patch_only() -> None:
    """Kueue's TestRestorePodSetsInfo."""
    user = job_patch("node", {"spec": {"nodeSelector": {"y": "1"}}})
    job = resolved(TRAINJOB.default(trainjob(patches=[user]), queue=None, suspend=True))
    running = started(job)
    restored = TRAINJOB.restore(TRAINJOB.suspend(running), TRAINJOB.pod_sets(job))
    assert restored["spec"]["suspend"] is True
    assert restored["spec"]["runtimePatches"] == [
        user,
        {"manager": KUEUE_PATCH_MANAGER, "trainingRuntimeSpec": {"template": {"spec": {}}}},
    ]
    assert pod_spec(restored, "node")["nodeSelector"] == {"y": "1"}
    assert TRAINJOB.pod_sets(restored) == TRAINJOB.pod_sets(job)
    assert kueue_patch(running)["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"], (
        "the argument is not mutated"
    )


def test_the_controller_creates_the_workload_then_starts_the_trainjob_on_its_flavor() -> None:
    job = resolved(
        TRAINJOB.default(
            trainjob(trainer={"numNodes": 2, "resourcesPerNode": {"requests": {"cpu": "1"}}}),
            queue=None,
            suspend=True,
        )
    )
    created = next_action(job, None, flavors={})
    assert isinstance(created, CreateWorkload)
    workload = created.workload
    assert workload["metadata"]["name"].startswith("trainjob-train-")
    assert workload["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [("node", 2)]
    start = next_action(job, admitted_workload(job, {"node": 2}), flavors=SPOT)
    assert isinstance(start, StartJob)
    assert start.job["spec"]["suspend"] is False
    spec = pod_spec(start.job, "node")
    assert spec["nodeSelector"] == {"instance-type": "spot"}
    assert spec["tolerations"] == [{"key": "spot", "operator": "Exists"}]
    (pod_set,) = TRAINJOB.pod_sets(start.job)
    assert pod_set["template"]["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "node"
    assert next_action(start.job, admitted_workload(job, {"node": 2}), flavors=SPOT) is None


# -- status: finished, active, ready, reclaimable ----------------------------------------------


@pytest.mark.parametrize(
    ("conditions", "finished", "reason", "message"),
    [
        (
            [{"type": "Complete", "status": "True", "message": "jobset completed"}],
            True,
            "Succeeded",
            "jobset completed",
        ),
        (
            [{"type": "Complete", "status": "True"}],
            True,
            "Succeeded",
            "TrainJob finished successfully",
        ),
        (
            [{"type": "Failed", "status": "True", "message": "jobset failed"}],
            True,
            "Failed",
            "jobset failed",
        ),
        ([{"type": "Failed", "status": "True"}], True, "Failed", "TrainJob failed"),
        (
            [{"type": "Complete", "status": "False"}, {"type": "Suspended", "status": "True"}],
            False,
            "",
            "",
        ),
        ([], False, "", ""),
    ],
)
def test_finished_by_complete_or_failed_condition(
    conditions: list[dict[str, Any]], finished: bool, reason: str, message: str
) -> None:
    state = TRAINJOB.finished(trainjob(status={"conditions": conditions}))
    assert (state.finished, state.reason, state.message) == (finished, reason, message)


def test_active_counts_the_child_jobs_trainer_reports_active() -> None:
    status = {
        "jobsStatus": [{"name": "launcher", "active": 1}, {"name": "node", "active": 3, "ready": 2}]
    }
    assert TRAINJOB.active(trainjob(status=status)) == 4
    assert TRAINJOB.active(trainjob(status={"jobsStatus": [{"name": "node", "active": 0}]})) == 0
    assert TRAINJOB.active(trainjob()) == 0


@pytest.mark.parametrize(
    ("jobs_status", "ready"),
    [
        ([], False),
        ([{"name": "launcher", "ready": 1}, {"name": "node", "ready": 0}], False),
        ([{"name": "launcher", "ready": 1}, {"name": "node", "ready": 1}], True),
        ([{"name": "launcher", "succeeded": 1}, {"name": "node", "ready": 1}], True),
        ([{"name": "launcher", "ready": 1, "active": 1}, {"name": "node", "active": 1}], False),
    ],
)
def test_pods_are_ready_when_ready_and_succeeded_jobs_match_every_replica(
    jobs_status: list[dict[str, Any]], ready: bool
) -> None:
    job = trainjob(
        "deepspeed-distributed", trainer={"numNodes": 4}, status={"jobsStatus": jobs_status}
    )
    assert TRAINJOB.pods_ready(resolved(job, deepspeed_distributed())) is ready


def test_succeeded_jobs_give_their_pods_quota_back() -> None:
    status = {
        "jobsStatus": [
            {"name": "launcher", "succeeded": 1},
            {"name": "node", "succeeded": 1, "active": 0},
        ]
    }
    job = resolved(
        trainjob("deepspeed-distributed", trainer={"numNodes": 4}, status=status),
        deepspeed_distributed(),
    )
    assert TRAINJOB.reclaimable_pods(job) == [
        ReclaimableCount("launcher", 1),
        ReclaimableCount("node", 3),
    ]
    nothing = resolved(
        trainjob("deepspeed-distributed", status={"jobsStatus": []}), deepspeed_distributed()
    )
    assert TRAINJOB.reclaimable_pods(nothing) == []
    too_many = resolved(
        trainjob(status={"jobsStatus": [{"name": "node", "succeeded": 2}]}), torch_distributed()
    )
    assert TRAINJOB.reclaimable_pods(too_many) == [], "more succeeded Jobs than replicas"


# -- MultiKueue --------------------------------------------------------------------------------


def manager_trainjob() -> dict[str, Any]:
    """A TrainJob on the manager: handed to MultiKueue, resolved, with both kinds of patch."""
    user = job_patch("node", {"spec": {"nodeSelector": {"y": "1"}}})
    job = TRAINJOB.default(trainjob(patches=[user]), queue=None, suspend=True)
    job = with_managed_by(job, TRAINJOB.managed_by_at, "kueue.x-k8s.io/multikueue")
    job["metadata"]["resourceVersion"] = "7"
    job["status"] = {"jobsStatus": [{"name": "node", "active": 1}]}
    return resolved(job)


def test_the_worker_copy_is_the_spec_without_managed_by_nor_the_resolved_runtime() -> None:
    copied = TRAINJOB.remote_copy(manager_trainjob(), "trainjob-train-abc", "manager-1")
    assert set(copied) == {"apiVersion", "kind", "metadata", "spec"}
    assert RESOLVED_RUNTIME not in str(copied)
    assert copied["metadata"] == {
        "name": "train",
        "namespace": "team-a",
        "labels": {
            QUEUE: "lq",
            "kueue.x-k8s.io/multikueue-origin": "manager-1",
            "kueue.x-k8s.io/prebuilt-workload-name": "trainjob-train-abc",
        },
    }
    assert "managedBy" not in copied["spec"]
    assert copied["spec"]["runtimeRef"] == {"name": "torch-distributed"}
    assert copied["spec"]["runtimePatches"][0]["manager"] == "example.com/user-manager"


def test_the_worker_copy_drops_kuotas_runtime_patch_for_the_workers_webhook_to_add() -> None:
    """Kueue's adapter (``SyncJob``, test "sync creates remote TrainJob stripping kueue runtime
    patch"): the worker's webhook adds its own; two entries of one manager are refused by
    Trainer's API (``runtimePatches`` is a list map keyed by ``manager``)."""
    copied = TRAINJOB.remote_copy(manager_trainjob(), "trainjob-train-abc", "manager-1")
    managers = [patch["manager"] for patch in copied["spec"]["runtimePatches"]]
    assert managers == ["example.com/user-manager"]


def test_once_the_copy_is_gone_the_managers_trainjob_runs_nothing() -> None:
    status = {
        "jobsStatus": [{"name": "node", "active": 2, "ready": 1, "succeeded": 0}],
        "conditions": [],
    }
    stopped = TRAINJOB.stopped_status(status)
    assert stopped == {
        "jobsStatus": [{"name": "node", "active": 0, "ready": 0, "succeeded": 0}],
        "conditions": [],
    }
    assert TRAINJOB.active(trainjob(status=stopped)) == 0
    assert TRAINJOB.stopped_status(stopped) is None, "nothing to write a second time"
    assert status["jobsStatus"][0]["active"] == 2, "the argument is not mutated"


# -- the webhook's rules -----------------------------------------------------------------------


def rules(
    new: dict[str, Any], old: dict[str, Any] | None = None, facts: AdmissionFacts = NO_FACTS
) -> list[tuple[str, str]]:
    errors = (
        TRAINJOB.validate_create(new, facts=facts)
        if old is None
        else TRAINJOB.validate_update(new, old, facts=facts)
    )
    return [(e.field, e.message) for e in errors]


def kueue_test_runtime(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """Kueue's TestValidateCreate runtime ``testCtr``: one replicated job ``node``."""
    job = replicated("node", container("node", "i"), replicas=1, parallelism=1, completions=1)
    if annotations:
        job["template"]["spec"]["template"]["metadata"] = {"annotations": annotations}
    return runtime(job, name="testCtr")


def kueue_annotation_patch(annotations: dict[str, str]) -> dict[str, Any]:
    return job_patch(
        "node", {"metadata": {"annotations": annotations}}, manager=KUEUE_PATCH_MANAGER
    )


MORE_THAN_ONE = (
    "must not contain more than one topology annotation: "
    '["kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology", '
    '"kueue.x-k8s.io/podset-unconstrained-topology"]'
)


def test_a_valid_topology_request_in_a_patch_or_the_runtime_is_accepted() -> None:
    in_patch = trainjob("testCtr", patches=[kueue_annotation_patch({REQUIRED: "cloud.com/block"})])
    assert rules(resolved(in_patch, kueue_test_runtime())) == []
    in_runtime = kueue_test_runtime({REQUIRED: "cloud.com/block"})
    assert rules(resolved(trainjob("testCtr"), in_runtime)) == []


def test_two_topology_annotations_in_a_patch_are_refused_with_the_hint() -> None:
    both = {PREFERRED: "cloud.com/block", REQUIRED: "cloud.com/block"}
    job = resolved(
        trainjob("testCtr", patches=[kueue_annotation_patch(both)]), kueue_test_runtime()
    )
    assert rules(job) == [("job[node].annotations", MORE_THAN_ONE + HINT)]


def test_two_topology_annotations_in_the_runtime_are_refused_with_the_hint() -> None:
    both = {PREFERRED: "cloud.com/block", REQUIRED: "cloud.com/block"}
    job = resolved(trainjob("testCtr"), kueue_test_runtime(both))
    assert rules(job) == [("job[node].annotations", MORE_THAN_ONE + HINT)]
    errors = TRAINJOB.validate_create(job, facts=NO_FACTS)
    assert [e.rule for e in errors] == ["TAS-1"]


def test_a_slice_larger_than_the_pod_set_is_refused_with_the_hint() -> None:
    annotations = {
        REQUIRED: "cloud.com/block",
        "kueue.x-k8s.io/podset-slice-required-topology": "cloud.com/block",
        "kueue.x-k8s.io/podset-slice-size": "20",
    }
    job = resolved(
        trainjob("testCtr", patches=[kueue_annotation_patch(annotations)]), kueue_test_runtime()
    )
    assert rules(job) == [
        (
            "job[node].annotations[kueue.x-k8s.io/podset-slice-size]",
            "must not be greater than pod set count 1" + HINT,
        )
    ]
    trainer_step = runtime(replicated("node", container("node", "i"), ancestor="trainer"))
    twenty = trainjob(trainer={"numNodes": 20}, patches=[kueue_annotation_patch(annotations)])
    assert rules(resolved(twenty, trainer_step)) == [], "20 nodes: a slice of 20 fits"


def test_the_topology_rules_run_on_an_update_too() -> None:
    both = {PREFERRED: "cloud.com/block", REQUIRED: "cloud.com/block"}
    job = resolved(trainjob("testCtr"), kueue_test_runtime(both))
    assert rules(job, trainjob("testCtr")) == [("job[node].annotations", MORE_THAN_ONE + HINT)]


def test_without_its_runtime_only_the_shared_rules_run() -> None:
    both = {PREFERRED: "cloud.com/block", REQUIRED: "cloud.com/block"}
    assert rules(trainjob("testCtr", patches=[kueue_annotation_patch(both)])) == []
    bad_queue = trainjob(queue="queue_name")
    assert [field for field, _ in rules(bad_queue)] == [f"metadata.labels[{QUEUE}]"]


def test_the_shared_rules_apply_to_a_resolved_trainjob() -> None:
    running = resolved(trainjob(suspend=False))
    moved = copy.deepcopy(running)
    moved["metadata"]["labels"][QUEUE] = "other"
    errors = TRAINJOB.validate_update(moved, running, facts=NO_FACTS)
    assert [(e.rule, e.field) for e in errors] == [("JOB-U1", f"metadata.labels[{QUEUE}]")]
    suspended_old, suspended_new = resolved(trainjob()), resolved(trainjob())
    suspended_new["metadata"]["labels"][QUEUE] = "other"
    assert TRAINJOB.validate_update(suspended_new, suspended_old, facts=NO_FACTS) == [], (
        "suspended: the queue may change"
    )
    unqueued_old = trainjob(queue=None)
    removed = rules(
        trainjob(queue=None), trainjob(), AdmissionFacts(namespace_has_default_queue=True)
    )
    assert removed == [
        (
            f"metadata.labels[{QUEUE}]",
            'must not be removed in a namespace with a "default" LocalQueue',
        )
    ]
    assert rules(unqueued_old, unqueued_old) == []
