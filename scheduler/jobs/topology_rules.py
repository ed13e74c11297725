"""The topology annotations of a pod template, checked as Kueue's job webhooks check them (TAS-*).

See docs/validation.md#topology-annotations and
docs/concepts.md#topology-aware-scheduling.  Each rule names the
annotation at fault, under the template's ``metadata.annotations``:

- TAS-1: at most one of required, preferred and unconstrained;
- TAS-2: a level named by required, preferred or slice-required is a
  label name;
- TAS-3: ``podset-group-name`` is not a number, needs required or
  preferred, and goes with no slice annotation;
- TAS-4: unconstrained is a boolean;
- TAS-5: slice size is a whole number of at least 1, and no more than the
  pod set's pods;
- TAS-6: slice-required and slice size come together;
- TAS-7: the multi-layer slice constraints: not with the single-layer
  annotations nor a group name, a JSON list of 1 to 3 ``{topology, size}``
  with label names, sizes of at least 1, no level twice, each size dividing
  the one above it, the first no more than the pod set's pods;
- TAS-8: pod sets grouped by ``podset-group-name`` (a JobSet's replicated
  jobs) come in pairs, one of them a single pod, with the same required or
  preferred level;

A queued Pod (alone, in a pod group, or of a Deployment or StatefulSet) is
its own template: :func:`check_topology_on_pod`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.formats import is_qualified_name
from scheduler.jobs.topology import (
    GROUP_NAME,
    PREFERRED,
    REQUIRED,
    SLICE_CONSTRAINTS,
    SLICE_REQUIRED,
    SLICE_SIZE,
    UNCONSTRAINED,
)

RULES = [f"TAS-{n}" for n in range(1, 9)]
TOPOLOGY_ANNOTATIONS: Final = (
    REQUIRED,
    PREFERRED,
    UNCONSTRAINED,
    SLICE_REQUIRED,
    SLICE_SIZE,
    SLICE_CONSTRAINTS,
    GROUP_NAME,
)


def _label_name(value: object, at: FieldPath, errors: list[FieldError], rule: str) -> None:
    if not isinstance(value, str) or not is_qualified_name(value):
        errors.append(
            error(
                at,
                f'"{value}" is not a valid label name (a qualified name such as '
                '"topology.kubernetes.io/zone")',
                rule=rule,
            )
        )


def _integer(text: object) -> int | None:
    if not isinstance(text, str):
        return None
    digits = text[1:] if text[:1] in "+-" else text
    return int(text) if digits.isdigit() else None


def check_topology_annotations(
    annotations: Mapping[str, Any],
    path: FieldPath,
    errors: list[FieldError],
    *,
    count: int | None = None,
) -> None:
    """TAS-1 … TAS-7 for one pod template's annotations (at ``path``); ``count``: its pods."""
    found = {key: key in annotations for key in (REQUIRED, PREFERRED, UNCONSTRAINED)}
    if sum(found.values()) > 1:
        errors.append(
            error(
                path,
                "must not contain more than one topology annotation: "
                f'["{REQUIRED}", "{PREFERRED}", "{UNCONSTRAINED}"]',
                rule="TAS-1",
            )
        )
    for key in (REQUIRED, PREFERRED, SLICE_REQUIRED):
        if key in annotations:
            _label_name(annotations[key], path.key(key), errors, "TAS-2")
    slice_required, slice_size = SLICE_REQUIRED in annotations, SLICE_SIZE in annotations
    if GROUP_NAME in annotations:
        at = path.key(GROUP_NAME)
        if _integer(annotations[GROUP_NAME]) is not None:
            errors.append(error(at, "must not be a number", rule="TAS-3"))
        for other in (SLICE_SIZE, SLICE_REQUIRED):
            if other in annotations:
                errors.append(
                    error(at, f"may not be set when '{other}' is specified", rule="TAS-3")
                )
        if not found[PREFERRED] and not found[REQUIRED]:
            errors.append(
                error(
                    at,
                    f"may not be set when neither '{PREFERRED}' nor '{REQUIRED}' is specified",
                    rule="TAS-3",
                )
            )
    if found[UNCONSTRAINED] and str(annotations[UNCONSTRAINED]) not in (
        "1",
        "t",
        "T",
        "true",
        "TRUE",
        "True",
        "0",
        "f",
        "F",
        "false",
        "FALSE",
        "False",
    ):
        errors.append(error(path.key(UNCONSTRAINED), "must be a boolean value", rule="TAS-4"))
    if slice_size:
        size = _integer(annotations[SLICE_SIZE])
        at = path.key(SLICE_SIZE)
        if size is None:
            errors.append(error(at, "must be a numeric value", rule="TAS-5"))
        elif size < 1:
            errors.append(error(at, "must be greater than or equal to 1", rule="TAS-5"))
        elif count is not None and size > count:
            errors.append(
                error(at, f"must not be greater than pod set count {count}", rule="TAS-5")
            )
    if slice_required and not slice_size:
        errors.append(
            error(
                path.key(SLICE_SIZE),
                f"required: must be set when '{SLICE_REQUIRED}' is specified",
                rule="TAS-6",
            )
        )
    if slice_size and not slice_required:
        errors.append(
            error(
                path.key(SLICE_SIZE),
                f"may not be set when '{SLICE_REQUIRED}' is not specified",
                rule="TAS-6",
            )
        )
    if SLICE_CONSTRAINTS in annotations:
        _check_layers(annotations, path, errors, count)


def _check_layers(
    annotations: Mapping[str, Any], path: FieldPath, errors: list[FieldError], count: int | None
) -> None:
    at = path.key(SLICE_CONSTRAINTS)
    for other in (SLICE_REQUIRED, SLICE_SIZE):
        if other in annotations:
            errors.append(error(at, f"may not be set when '{other}' is specified", rule="TAS-7"))
    if GROUP_NAME in annotations:
        errors.append(
            error(
                path.key(GROUP_NAME),
                f"may not be set when '{SLICE_CONSTRAINTS}' is specified",
                rule="TAS-7",
            )
        )
    text = annotations[SLICE_CONSTRAINTS]
    try:
        layers = json.loads(str(text))
    except ValueError as bad:
        errors.append(error(at, f"must be a valid JSON array: {bad}", rule="TAS-7"))
        return
    if not isinstance(layers, list) or not all(isinstance(item, dict) for item in layers):
        errors.append(error(at, "must be a valid JSON array of {topology, size}", rule="TAS-7"))
        return
    if not 1 <= len(layers) <= 3:
        errors.append(
            error(at, "topology constraints must contain between 1 and 3 entries", rule="TAS-7")
        )
        return
    seen: dict[object, int] = {}
    for index, layer in enumerate(layers):
        entry = at.index(index)
        _label_name(layer.get("topology"), entry.child("topology"), errors, "TAS-7")
        size = layer.get("size")
        if not isinstance(size, int) or size < 1:
            errors.append(
                error(entry.child("size"), "must be greater than or equal to 1", rule="TAS-7")
            )
        topology = layer.get("topology")
        if topology in seen:
            errors.append(
                error(
                    entry.child("topology"),
                    f"duplicate: {topology} (also at index {seen[topology]})",
                    rule="TAS-7",
                )
            )
        else:
            seen[topology] = index
    sizes = [layer.get("size") for layer in layers]
    for index in range(len(sizes) - 1):
        parent, child = sizes[index], sizes[index + 1]
        if isinstance(parent, int) and isinstance(child, int) and child > 0 and parent % child:
            errors.append(
                error(
                    at.index(index + 1).child("size"),
                    f"must evenly divide the parent layer size {parent}",
                    rule="TAS-7",
                )
            )
    first = sizes[0]
    if count is not None and isinstance(first, int) and first > count:
        errors.append(error(at, f"must not be greater than pod set count {count}", rule="TAS-7"))


def check_topology_groups(
    pod_sets: Sequence[tuple[FieldPath, Mapping[str, Any], int]], errors: list[FieldError]
) -> None:
    """TAS-8 over a job's pod templates: (annotations path, annotations, pod count) each."""
    groups: dict[str, list[tuple[FieldPath, Mapping[str, Any], int]]] = {}
    for item in pod_sets:
        annotations = item[1]
        name = annotations.get(GROUP_NAME)
        if isinstance(name, str) and (REQUIRED in annotations or PREFERRED in annotations):
            groups.setdefault(name, []).append(item)
    for name, members in groups.items():
        if len(members) != 2:
            for path, _, _ in members:
                errors.append(
                    error(
                        path.key(GROUP_NAME),
                        f"can only define groups of exactly 2 pod sets, got: {len(members)} pod "
                        "set(s)",
                        rule="TAS-8",
                    )
                )
            continue
        (first, one, first_count), (second, other, second_count) = members
        if first_count != 1 and second_count != 1:
            message = (
                "can only define groups where at least one pod set has only 1 replica, got: "
                f"{first_count} replica(s) and {second_count} replica(s) in the group"
            )
            for path in (first, second):
                errors.append(error(path.key(GROUP_NAME), message, rule="TAS-8"))
        if (one.get(REQUIRED), one.get(PREFERRED)) != (other.get(REQUIRED), other.get(PREFERRED)):
            for path, peer in ((first, second), (second, first)):
                errors.append(
                    error(
                        path,
                        f"must specify '{REQUIRED}' or '{PREFERRED}' topology consistent with "
                        f"'{peer}' in group '{name}'",
                        rule="TAS-8",
                    )
                )


def check_topology_on_pod(pod: Mapping[str, Any]) -> list[FieldError]:
    """TAS-1 … TAS-7 for a queued Pod's own annotations (alone or in a pod group): pure.

    A Pod is its own pod template (docs/concepts.md#topology-aware-scheduling),
    so its annotations are checked as a template's, at ``metadata.annotations``;
    its pod set's size is not known here (a group's pods arrive one by one).
    """
    metadata = pod.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if not isinstance(annotations, Mapping):
        return []
    errors: list[FieldError] = []
    check_topology_annotations(annotations, FieldPath(("metadata", "annotations")), errors)
    return errors


__all__ = [
    "RULES",
    "TOPOLOGY_ANNOTATIONS",
    "check_topology_annotations",
    "check_topology_groups",
    "check_topology_on_pod",
]
