"""The JobSet Kubeflow Trainer makes for a TrainJob, as far as its pod sets depend on it.

A TrainJob names a runtime (``spec.runtimeRef``: a ClusterTrainingRuntime,
or a TrainingRuntime of its namespace) whose ``spec.template`` is a JobSet
template; Trainer makes the TrainJob's JobSet from it.  Kueue queues a
TrainJob as that JobSet, and so does kuota (docs/concepts.md#trainjob):

1. the runtime's replicated jobs, each with the TrainJob's runtime patches
   (``spec.runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs``)
   merged in by name (:func:`~scheduler.jobs.trainjob.patches.strategic_merge`);
2. each replicated job runs ``count`` pods per replica (``parallelism`` and
   ``completions`` both set to it): its ``parallelism`` (1 by default), or,
   for the trainer step (label ``trainer.kubeflow.org/trainjob-ancestor-step:
   trainer``) of a runtime with an ``mlPolicy``, the policy's ``numNodes``;
   the TrainJob's ``trainer.numNodes`` then replaces the trainer step's count
   (for an MPI policy: the count of the replicated job ``node``, one less
   when the launcher runs as a node, at least 1);
3. the trainer step and the initializers run one replica; the trainer
   step's container ``node`` takes the TrainJob's ``trainer.image``,
   ``command`` and ``args``; it (and, for an MPI launcher run as a node, the
   replicated job ``node``'s) takes ``trainer.resourcesPerNode`` and
   ``trainer.env``.

Everything here is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from scheduler.jobs.pod_template import mapping
from scheduler.jobs.trainjob.patches import strategic_merge

TRAINER_GROUP: Final = "trainer.kubeflow.org"
TRAINER_API_VERSION: Final = "trainer.kubeflow.org/v1alpha1"
CLUSTER_RUNTIME: Final = "ClusterTrainingRuntime"
NAMESPACED_RUNTIME: Final = "TrainingRuntime"
ANCESTOR_LABEL: Final = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_STEP: Final = "trainer"
INITIALIZER_STEPS: Final = frozenset({"dataset-initializer", "model-initializer"})
NODE: Final = "node"
"""The trainer's container, and MPI's replicated job of workers."""


@dataclass(frozen=True, slots=True)
class RuntimeRef:
    """The runtime a TrainJob names: a ClusterTrainingRuntime, or a TrainingRuntime."""

    kind: str
    name: str

    @property
    def cluster_scoped(self) -> bool:
        return self.kind == CLUSTER_RUNTIME


def runtime_ref(trainjob: Mapping[str, Any]) -> RuntimeRef | None:
    """The runtime ``spec.runtimeRef`` names (the CRD's defaults: group
    ``trainer.kubeflow.org``, kind ClusterTrainingRuntime); None when it names
    no runtime of Trainer's (another group or kind, or no name)."""
    ref = mapping(mapping(trainjob.get("spec")).get("runtimeRef"))
    name, group = ref.get("name"), ref.get("apiGroup", TRAINER_GROUP)
    kind = ref.get("kind", CLUSTER_RUNTIME)
    if not isinstance(name, str) or not name or group != TRAINER_GROUP:
        return None
    if kind not in (CLUSTER_RUNTIME, NAMESPACED_RUNTIME):
        return None
    return RuntimeRef(str(kind), name)


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ancestor(replicated: Mapping[str, Any]) -> object:
    labels = mapping(mapping(mapping(replicated.get("template")).get("metadata")).get("labels"))
    return labels.get(ANCESTOR_LABEL)


def _patched(trainjob: Mapping[str, Any], replicated: list[dict[str, Any]]) -> None:
    """Merge every runtime patch's replicated-job templates into ``replicated`` (in place)."""
    patches = mapping(trainjob.get("spec")).get("runtimePatches")
    for patch in patches if isinstance(patches, list) else []:
        template = mapping(mapping(mapping(patch).get("trainingRuntimeSpec")).get("template"))
        jobs = mapping(template.get("spec")).get("replicatedJobs")
        for job_patch in jobs if isinstance(jobs, list) else []:
            job_patch = mapping(job_patch)
            if not isinstance(job_patch.get("template"), Mapping):
                continue
            for job in replicated:
                if job.get("name") == job_patch.get("name"):
                    job["template"] = strategic_merge(
                        mapping(job.get("template")), job_patch["template"]
                    )


def _counts(
    replicated: list[dict[str, Any]],
    ml_policy: Mapping[str, Any] | None,
    trainer: Mapping[str, Any],
    *,
    launcher_as_node: bool | None,
) -> list[int]:
    """Pods per replica of each replicated job (steps 2 of the module docstring)."""
    counts = []
    for job in replicated:
        count = _integer(mapping(mapping(job.get("template")).get("spec")).get("parallelism"))
        if _ancestor(job) == TRAINER_STEP and ml_policy is not None:
            count = _integer(ml_policy.get("numNodes"))
        counts.append(1 if count is None else count)
    nodes = _integer(trainer.get("numNodes"))
    if nodes is None:
        return counts
    if launcher_as_node is not None:
        at = next((i for i, job in enumerate(replicated) if job.get("name") == NODE), None)
        if at is not None:
            counts[at] = max(nodes - 1, 1) if launcher_as_node else nodes
    else:
        at = next((i for i, job in enumerate(replicated) if _ancestor(job) == TRAINER_STEP), None)
        if at is not None:
            counts[at] = nodes
    return counts


def _upsert_env(container: dict[str, Any], env: object) -> None:
    """Trainer's upsert: a variable of a known name is replaced where it stands, others appended."""
    if not isinstance(env, list):
        return
    current = [item for item in container.get("env") or [] if isinstance(item, Mapping)]
    for item in env:
        if not isinstance(item, Mapping):
            continue
        names = [known.get("name") for known in current]
        if item.get("name") in names:
            current[names.index(item.get("name"))] = copy.deepcopy(dict(item))
        else:
            current.append(copy.deepcopy(dict(item)))
    container["env"] = current


def _apply_trainer(job: dict[str, Any], trainer: Mapping[str, Any], *, resources: bool) -> None:
    """The TrainJob's ``trainer`` on the container ``node`` of ``job`` (step 3)."""
    pod_spec = mapping(mapping(mapping(job.get("template")).get("spec")).get("template"))
    containers = mapping(pod_spec.get("spec")).get("containers")
    for container in containers if isinstance(containers, list) else []:
        if not isinstance(container, dict) or container.get("name") != NODE:
            continue
        if _ancestor(job) == TRAINER_STEP:
            for key in ("image", "command", "args"):
                if trainer.get(key) is not None:
                    container[key] = copy.deepcopy(trainer[key])
        if resources:
            per_node = mapping(trainer.get("resourcesPerNode"))
            wanted = {key: per_node[key] for key in ("limits", "requests") if per_node.get(key)}
            if wanted:
                container["resources"] = copy.deepcopy(wanted)
            _upsert_env(container, trainer.get("env"))


def runtime_errors(runtime: Mapping[str, Any]) -> list[str]:
    """What Trainer's runtime schema refuses and :func:`replicated_jobs` relies on: replicated
    jobs that are objects with a name and an object ``template``."""
    spec = mapping(runtime.get("spec"))
    template = spec.get("template")
    jobs = mapping(mapping(template).get("spec")).get("replicatedJobs")
    if not isinstance(template, Mapping) or not isinstance(jobs, list):
        return ["spec.template.spec.replicatedJobs: Required value: a list of replicated jobs"]
    errors = []
    for index, job in enumerate(jobs):
        at = f"spec.template.spec.replicatedJobs[{index}]"
        if not isinstance(job, Mapping):
            errors.append(f"{at}: Invalid value: must be an object")
            continue
        if not isinstance(job.get("name"), str) or not job.get("name"):
            errors.append(f"{at}.name: Required value")
        if not isinstance(job.get("template"), Mapping):
            errors.append(f"{at}.template: Invalid value: must be an object (a Job template)")
    return errors


def replicated_jobs(
    trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The replicated jobs of the JobSet Trainer makes for ``trainjob`` from ``runtime_spec``
    (a runtime's ``spec``), with ``parallelism`` and ``completions`` set as Kueue sets them."""
    template_spec = mapping(mapping(runtime_spec.get("template")).get("spec"))
    source = template_spec.get("replicatedJobs")
    replicated = [
        copy.deepcopy(dict(job))
        for job in (source if isinstance(source, list) else [])
        if isinstance(job, Mapping)
    ]
    _patched(trainjob, replicated)
    policy = runtime_spec.get("mlPolicy")
    ml_policy = policy if isinstance(policy, Mapping) else None
    trainer = mapping(mapping(trainjob.get("spec")).get("trainer"))
    mpi = ml_policy.get("mpi") if ml_policy is not None else None
    # None: not an MPI policy; else whether its launcher runs as a node.
    launcher_as_node = mpi.get("runLauncherAsNode") is True if isinstance(mpi, Mapping) else None
    counts = _counts(replicated, ml_policy, trainer, launcher_as_node=launcher_as_node)
    for job, count in zip(replicated, counts, strict=True):
        job_template = job.get("template")
        if not isinstance(job_template, dict):
            job_template = job["template"] = {}
        spec = job_template.get("spec")
        if not isinstance(spec, dict):
            spec = job_template["spec"] = {}
        spec["parallelism"] = spec["completions"] = count
        ancestor = _ancestor(job)
        if ancestor == TRAINER_STEP or ancestor in INITIALIZER_STEPS:
            job["replicas"] = 1
        _apply_trainer(
            job,
            trainer,
            resources=ancestor == TRAINER_STEP
            or (launcher_as_node is True and job.get("name") == NODE),
        )
    return replicated


__all__ = [
    "ANCESTOR_LABEL",
    "CLUSTER_RUNTIME",
    "NAMESPACED_RUNTIME",
    "TRAINER_API_VERSION",
    "TRAINER_GROUP",
    "RuntimeRef",
    "replicated_jobs",
    "runtime_errors",
    "runtime_ref",
]
