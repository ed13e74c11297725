"""Builders of raw v1beta2 objects for the validation and defaulting tests.

Each builder returns a small valid object; tests change one thing and look
for the one violation it causes.  Keyword arguments named like API fields
(camelCase) are copied into ``spec`` as they are.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from scheduler.api.field import FieldError

KUEUE = "kueue.x-k8s.io/v1beta2"


def _object(
    kind: str, name: str, spec: dict[str, Any] | None, namespace: str | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    obj: dict[str, Any] = {"apiVersion": KUEUE, "kind": kind, "metadata": metadata}
    if spec is not None:
        obj["spec"] = spec
    return obj


def quota(
    name: str, nominal: Any = "1", *, borrowing: Any = None, lending: Any = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "nominalQuota": nominal}
    if borrowing is not None:
        entry["borrowingLimit"] = borrowing
    if lending is not None:
        entry["lendingLimit"] = lending
    return entry


def flavor(name: str | None, *entries: dict[str, Any], **simple: Any) -> dict[str, Any]:
    """``flavor("spot", cpu="9", memory="36Gi")`` or with ``quota(...)`` entries."""
    resources = list(entries) + [quota(resource, value) for resource, value in simple.items()]
    result: dict[str, Any] = {"resources": resources}
    if name is not None:
        result["name"] = name
    return result


def group(covered: list[Any], *flavors: dict[str, Any]) -> dict[str, Any]:
    return {"coveredResources": covered, "flavors": list(flavors)}


def cluster_queue(
    name: str = "cq",
    *,
    groups: list[Any] | None = None,
    cohort: str | None = None,
    admission_checks: list[Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"namespaceSelector": {}}
    if groups is not None:
        body["resourceGroups"] = groups
    if cohort is not None:
        body["cohortName"] = cohort
    if admission_checks is not None:
        body["admissionChecksStrategy"] = {"admissionChecks": admission_checks}
    body.update(spec)
    return _object("ClusterQueue", name, body)


def simple_cluster_queue(
    *entries: dict[str, Any], cohort: str | None = None, **spec: Any
) -> dict[str, Any]:
    """One group, one flavor ``alpha``, the given quota entries (default cpu: 1)."""
    entries = entries or (quota("cpu"),)
    covered = [entry.get("name") for entry in entries]
    return cluster_queue(groups=[group(covered, flavor("alpha", *entries))], cohort=cohort, **spec)


def resource_flavor(
    name: str = "rf",
    *,
    node_labels: dict[str, Any] | None = None,
    taints: list[Any] | None = None,
    tolerations: list[Any] | None = None,
    topology: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node_labels is not None:
        spec["nodeLabels"] = node_labels
    if taints is not None:
        spec["nodeTaints"] = taints
    if tolerations is not None:
        spec["tolerations"] = tolerations
    if topology is not None:
        spec["topologyName"] = topology
    return _object("ResourceFlavor", name, spec)


def local_queue(
    name: str = "lq", *, cluster_queue: str | None = "cq", namespace: str = "default", **spec: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {} if cluster_queue is None else {"clusterQueue": cluster_queue}
    body.update(spec)
    return _object("LocalQueue", name, body, namespace)


def cohort(
    name: str = "co", *, parent: str | None = None, groups: list[Any] | None = None, **spec: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if parent is not None:
        body["parentName"] = parent
    if groups is not None:
        body["resourceGroups"] = groups
    body.update(spec)
    return _object("Cohort", name, body)


def container(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, name: str = "c"
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "busybox", "resources": resources}


def pod_set(
    name: str | None = None,
    *,
    count: Any = None,
    min_count: Any = None,
    requests: dict[str, Any] | None = None,
    containers: list[Any] | None = None,
    init_containers: list[Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {
        "containers": containers
        if containers is not None
        else [container(requests or {"cpu": "1"})]
    }
    if init_containers is not None:
        pod_spec["initContainers"] = init_containers
    result: dict[str, Any] = {"template": {"spec": pod_spec}}
    if name is not None:
        result["name"] = name
    if count is not None:
        result["count"] = count
    if min_count is not None:
        result["minCount"] = min_count
    result.update(extra)
    return result


def workload(
    name: str = "wl",
    *,
    pod_sets: list[Any] | None = None,
    namespace: str = "default",
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "queueName": "lq",
        "podSets": pod_sets if pod_sets is not None else [pod_set()],
    }
    body.update(spec)
    obj = _object("Workload", name, body, namespace)
    if annotations is not None:
        obj["metadata"]["annotations"] = annotations
    return obj


def condition(kind: str, status: str = "True", reason: str | None = None) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason or kind,
        "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }


def with_spec(obj: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A copy of ``obj`` with raw ``spec`` fields set (names used verbatim)."""
    result = copy.deepcopy(obj)
    result.setdefault("spec", {}).update(fields)
    return result


def with_status(obj: dict[str, Any], **status: Any) -> dict[str, Any]:
    result = copy.deepcopy(obj)
    result.setdefault("status", {}).update(status)
    return result


def reserved(
    obj: dict[str, Any], *, assignments: list[Any] | None = None, admitted: bool = False
) -> dict[str, Any]:
    """The workload holding quota in ClusterQueue ``cq`` (assignments derived from its pod sets)."""
    if assignments is None:
        assignments = []
        for item in obj["spec"]["podSets"]:
            count = item.get("count", 1)
            assignments.append(
                {
                    "name": item.get("name", "main"),
                    "count": count,
                    "flavors": {"cpu": "alpha"},
                    "resourceUsage": {"cpu": str(count)},
                }
            )
    conditions = [condition("QuotaReserved")] + ([condition("Admitted")] if admitted else [])
    return with_status(
        obj,
        conditions=conditions,
        admission={"clusterQueue": "cq", "podSetAssignments": assignments},
    )


def priority_class(name: str = "high", value: Any = 100, **fields: Any) -> dict[str, Any]:
    obj = _object("WorkloadPriorityClass", name, None)
    if value is not None:
        obj["value"] = value
    obj.update(fields)
    return obj


def admission_check(
    name: str = "ac",
    *,
    controller: str | None = "kueue.x-k8s.io/multikueue",
    parameters: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if controller is not None:
        spec["controllerName"] = controller
    if parameters is not None:
        spec["parameters"] = parameters
    return _object("AdmissionCheck", name, spec)


def multikueue_config(
    name: str = "mk", clusters: list[Any] | None = None, **spec: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {} if clusters is None else {"clusters": clusters}
    body.update(spec)
    return _object("MultiKueueConfig", name, body)


def multikueue_cluster(
    name: str = "worker", *, source: dict[str, Any] | None = None
) -> dict[str, Any]:
    if source is None:
        source = {"kubeConfig": {"location": "worker-secret"}}
    return _object("MultiKueueCluster", name, {"clusterSource": source})


def topology(name: str = "topo", levels: list[Any] | None = None) -> dict[str, Any]:
    spec = {} if levels is None else {"levels": [{"nodeLabel": label} for label in levels]}
    return _object("Topology", name, spec)


def job(
    name: str = "job",
    *,
    queue: str | None = None,
    suspend: bool | None = True,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    namespace: str = "default",
    **spec: Any,
) -> dict[str, Any]:
    all_labels = dict(labels or {})
    if queue is not None:
        all_labels["kueue.x-k8s.io/queue-name"] = queue
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": all_labels}
    if annotations is not None:
        metadata["annotations"] = annotations
    body: dict[str, Any] = {
        "template": {"spec": {"containers": [container()], "restartPolicy": "Never"}}
    }
    if suspend is not None:
        body["suspend"] = suspend
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": body}


def configuration(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    obj.update(fields)
    return obj


# --- assertions ---------------------------------------------------------------------


def find(errors: list[FieldError], field: str, *words: str, rule: str | None = None) -> FieldError:
    """The violation at ``field`` whose message holds every word (and rule, when given)."""
    for item in errors:
        if (
            item.field == field
            and all(word in item.message for word in words)
            and (rule is None or item.rule == rule)
        ):
            return item
    rendered = "\n  ".join(f"{item.rule}: {item.render()}" for item in errors) or "(none)"
    raise AssertionError(
        f"no violation at {field!r} with {words!r} (rule {rule}); got:\n  {rendered}"
    )


def without_rule(errors: list[FieldError], rule: str) -> bool:
    return all(item.rule != rule for item in errors)


# --- table-driven rule cases -------------------------------------------------------


@dataclass
class Bad:
    """A failing case: ``new`` (and ``old`` for UPDATE) must violate ``rule`` at ``path``."""

    rule: str
    new: dict[str, Any]
    path: str
    words: tuple[str, ...]
    old: dict[str, Any] | None = None
    options: dict[str, Any] = dataclass_field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.path}:{self.words[0] if self.words else ''}"[:90]


@dataclass
class Good:
    """A passing case for ``rule``: the object (or update) has no violation at all."""

    rule: str
    new: dict[str, Any]
    old: dict[str, Any] | None = None
    options: dict[str, Any] = dataclass_field(default_factory=dict)
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.note}"[:90]


def bad(
    rule: str,
    new: dict[str, Any],
    path: str,
    *words: str,
    old: dict[str, Any] | None = None,
    **options: Any,
) -> Bad:
    return Bad(rule, new, path, words, old, options)


def good(
    rule: str,
    new: dict[str, Any],
    *,
    old: dict[str, Any] | None = None,
    note: str = "",
    **options: Any,
) -> Good:
    return Good(rule, new, old, options, note)


def check_bad(validator: Any, case: Bad) -> None:
    errors = validator(case.new, case.old, **case.options)
    found = find(errors, case.path, *case.words, rule=case.rule)
    assert found.origin in ("S", "C", "A", "W", "L", "K")


def check_good(validator: Any, case: Good) -> None:
    errors = validator(case.new, case.old, **case.options)
    assert errors == [], "\n".join(f"{item.rule}: {item.render()}" for item in errors)
