"""``kuota simulate`` of TrainJobs (docs/concepts.md#trainjob): a TrainJob's pod sets come from
the ClusterTrainingRuntime or TrainingRuntime it names, read from the inputs like the cluster
reads it; a TrainJob whose runtime is not among the inputs is an input error naming it."""

from __future__ import annotations

import io
import json

from scheduler.cli.main import main

QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 6}, {name: memory, nominalQuota: 8Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ns}
spec: {clusterQueue: cq}
"""

TORCH_DISTRIBUTED = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels:
    trainer.kubeflow.org/framework: torch
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.10.0-cuda12.8-cudnn9-runtime
"""

DEEPSPEED_DISTRIBUTED = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: deepspeed-distributed
spec:
  mlPolicy:
    numNodes: 1
    mpi:
      numProcPerNode: 1
      mpiImplementation: OpenMPI
      sshAuthMountPath: /home/mpiuser/.ssh
      runLauncherAsNode: true
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: ghcr.io/kubeflow/trainer/deepspeed-runtime
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: ghcr.io/kubeflow/trainer/deepspeed-runtime
                      command: [/usr/sbin/sshd]
"""


def trainjob(
    name: str = "train",
    *,
    runtime: str = "torch-distributed",
    kind: str = "ClusterTrainingRuntime",
    nodes: int = 3,
    cpu: str = "1500m",
) -> str:
    return f"""\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {name}
  namespace: ns
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  runtimeRef: {{apiGroup: trainer.kubeflow.org, kind: {kind}, name: {runtime}}}
  trainer:
    numNodes: {nodes}
    resourcesPerNode:
      requests: {{cpu: {cpu}, memory: 1Gi}}
"""


def training_runtime(namespace: str) -> str:
    """TrainingRuntime ``local`` of ``namespace``: torch-distributed's template."""
    return TORCH_DISTRIBUTED.replace(
        "kind: ClusterTrainingRuntime", "kind: TrainingRuntime"
    ).replace("  name: torch-distributed\n", f"  name: local\n  namespace: {namespace}\n")


def simulate(*documents: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    stdin = "---\n".join(documents)
    code = main(["simulate", "--json", "-"], stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_a_trainjob_is_admitted_with_its_runtimes_pod_set_and_the_trainers_resources() -> None:
    code, out, err = simulate(QUEUES, TORCH_DISTRIBUTED, trainjob())
    assert code == 0, err
    assert "ClusterTrainingRuntime" not in err, "a runtime is an input, not an unknown kind"
    report = json.loads(out)
    (key,) = report["workloads"]
    assert key.startswith("ns/trainjob-train-")
    assert report["workloads"][key] == {
        "state": "Admitted",
        "clusterQueue": "cq",
        "flavors": {"node": {"cpu": "default", "memory": "default"}},
        "evictions": 0,
        "message": "Quota reserved in ClusterQueue cq",
    }
    assert report["clusterQueues"] == {
        "cq": {
            "pending": 0,
            "admitted": 1,
            "usage": {"default": {"cpu": "4500m", "memory": "3Gi"}},
        }
    }, "3 nodes of 1500m and 1Gi each"


def test_the_runtime_may_come_after_the_trainjob_among_the_inputs() -> None:
    code, out, err = simulate(QUEUES, trainjob(), TORCH_DISTRIBUTED)
    assert code == 0, err
    assert json.loads(out)["clusterQueues"]["cq"]["usage"]["default"]["cpu"] == "4500m"


def test_a_trainjob_that_does_not_fit_beside_another_waits() -> None:
    code, out, err = simulate(QUEUES, TORCH_DISTRIBUTED, trainjob("first"), trainjob("second"))
    assert code == 0, err
    report = json.loads(out)
    states = {key.split("-")[1]: w["state"] for key, w in report["workloads"].items()}
    assert states == {"first": "Admitted", "second": "Pending"}
    assert report["clusterQueues"]["cq"]["pending"] == 1


def test_an_mpi_trainjob_counts_its_launcher_and_one_node_less() -> None:
    job = trainjob(runtime="deepspeed-distributed", nodes=4, cpu="1")
    code, out, err = simulate(QUEUES, DEEPSPEED_DISTRIBUTED, job)
    assert code == 0, err
    report = json.loads(out)
    (workload,) = report["workloads"].values()
    assert workload["state"] == "Admitted"
    assert set(workload["flavors"]) == {"launcher", "node"}
    usage = report["clusterQueues"]["cq"]["usage"]["default"]
    assert usage == {"cpu": "4", "memory": "4Gi"}, "the launcher and 3 nodes of 1 CPU, 1Gi"


def test_without_its_runtime_among_the_inputs_the_command_fails_naming_it() -> None:
    code, out, err = simulate(QUEUES, trainjob())
    assert (code, out) == (2, "")
    assert (
        "TrainJob/train: its ClusterTrainingRuntime torch-distributed is not among the inputs"
        in err
    )


def test_a_training_runtime_is_read_from_the_trainjobs_namespace_only() -> None:
    job = trainjob(runtime="local", kind="TrainingRuntime", nodes=2, cpu="1")
    code, out, err = simulate(QUEUES, training_runtime("ns"), job)
    assert code == 0, err
    assert json.loads(out)["clusterQueues"]["cq"]["usage"]["default"]["cpu"] == "2"
    code, out, err = simulate(QUEUES, training_runtime("elsewhere"), job)
    assert (code, out) == (2, "")
    assert (
        "TrainJob/train: its TrainingRuntime local in namespace ns is not among the inputs" in err
    )


def test_a_runtime_whose_replicated_job_is_not_a_template_is_invalid_input() -> None:
    """docs/validation.md#kuota-simulate: invalid input exits 2, it never raises."""
    broken = TORCH_DISTRIBUTED.split("          template:\n")[0] + "          template: oops\n"
    code, out, _ = simulate(QUEUES, broken, trainjob())
    assert (code, out) == (2, "")
