"""What starting and restoring a job does to one pod template, for every integration.

A Job has one pod template, a JobSet one per replicated job; the rules for
each template are the same (docs/concepts.md#how-a-job-is-suspended-admitted-and-started,
docs/concepts.md#eviction-and-restore), so they live here once:

- :func:`steer` adds the admission's flavor placement: node selector
  entries (a key the user set is never overridden), tolerations, labels,
  annotations and scheduling gates (the topology gate of a pod set placed by
  topology);
- :func:`restore` puts back the Workload's record of the template: labels,
  annotations, nodeSelector, tolerations and schedulingGates are replaced
  wholesale, so everything the admission added disappears and nothing the
  user had is lost.

Both change a template that the caller has already copied.  Pure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from scheduler.jobs.protocol import PodSetInfo

RESTORED_SPEC_FIELDS = ("nodeSelector", "tolerations", "schedulingGates")


def mapping(value: object) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one: pure."""
    return value if isinstance(value, Mapping) else {}


def has_gate(obj: Mapping[str, Any], name: str) -> bool:
    """Whether a Pod (or pod template) carries scheduling gate ``name``: pure."""
    gates = mapping(obj.get("spec")).get("schedulingGates")
    return isinstance(gates, list) and any(
        isinstance(gate, Mapping) and gate.get("name") == name for gate in gates
    )


def without_gate(obj: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A copy of a Pod (or pod template) without scheduling gate ``name``, others kept: pure."""
    result = copy.deepcopy(dict(obj))
    spec = result.setdefault("spec", {})
    gates = [
        gate
        for gate in spec.get("schedulingGates") or []
        if not (isinstance(gate, Mapping) and gate.get("name") == name)
    ]
    if gates:
        spec["schedulingGates"] = gates
    else:
        spec.pop("schedulingGates", None)
    return result


def steer(template: dict[str, Any], info: PodSetInfo) -> None:
    """Add ``info``'s placement to ``template`` (in place)."""
    pod_spec = template.setdefault("spec", {})
    if info.node_selector:
        # Flavor labels are added; a key the user already set is never overridden.
        pod_spec["nodeSelector"] = {**info.node_selector, **mapping(pod_spec.get("nodeSelector"))}
    if info.tolerations:
        pod_spec["tolerations"] = [
            *list(pod_spec.get("tolerations") or []),
            *map(dict, info.tolerations),
        ]
    if info.scheduling_gates:
        gates = [
            gate for gate in pod_spec.get("schedulingGates") or [] if isinstance(gate, Mapping)
        ]
        present = {gate.get("name") for gate in gates}
        pod_spec["schedulingGates"] = [
            *gates,
            *({"name": name} for name in info.scheduling_gates if name not in present),
        ]
    if info.labels or info.annotations:
        metadata = template.setdefault("metadata", {})
        if info.labels:
            metadata["labels"] = {**mapping(metadata.get("labels")), **info.labels}
        if info.annotations:
            metadata["annotations"] = {**mapping(metadata.get("annotations")), **info.annotations}


def restore(
    template: dict[str, Any],
    recorded: Mapping[str, Any],
    *,
    kept_labels: Mapping[str, str] | None = None,
) -> None:
    """Replace ``template``'s placement by the ``recorded`` template's (in place).

    ``kept_labels`` stay on top of the recorded labels (the Job controller's,
    which its selector must keep matching).
    """
    metadata = template.setdefault("metadata", {})
    recorded_metadata = mapping(recorded.get("metadata"))
    for key, value in (
        ("labels", {**mapping(recorded_metadata.get("labels")), **(kept_labels or {})}),
        ("annotations", dict(mapping(recorded_metadata.get("annotations")))),
    ):
        if value:
            metadata[key] = value
        else:
            metadata.pop(key, None)
    pod_spec = template.setdefault("spec", {})
    recorded_spec = mapping(recorded.get("spec"))
    for key in RESTORED_SPEC_FIELDS:
        if recorded_spec.get(key):
            pod_spec[key] = copy.deepcopy(recorded_spec[key])
        else:
            pod_spec.pop(key, None)


def without_duplicate_env(pod_set: Mapping[str, Any]) -> Mapping[str, Any]:
    """The pod set with each container's env variables named once, as Kueue sanitizes a
    Workload's pod sets: in first-seen order, each with its last value (the one the
    kubelet uses); the same object when nothing repeats: pure."""
    template = mapping(pod_set.get("template"))
    spec = mapping(template.get("spec"))
    changed: dict[str, list[Any]] = {}
    for field in ("containers", "initContainers"):
        containers = spec.get(field)
        if not isinstance(containers, list):
            continue
        rewritten = [_distinct_env(container) for container in containers]
        if any(new is not old for new, old in zip(rewritten, containers, strict=True)):
            changed[field] = rewritten
    if not changed:
        return pod_set
    result = copy.deepcopy(dict(pod_set))
    result["template"]["spec"].update(changed)
    return result


def _distinct_env(container: object) -> object:
    env = container.get("env") if isinstance(container, Mapping) else None
    if not isinstance(env, list):
        return container
    last: dict[str, Any] = {}
    for item in env:
        name = item.get("name") if isinstance(item, Mapping) else None
        last[str(name)] = item  # dict keeps the first position, takes the last value
    if len(last) == len(env):
        return container
    assert isinstance(container, Mapping)
    return {**copy.deepcopy(dict(container)), "env": list(last.values())}
