"""Kubernetes' strategic merge of a TrainJob's runtime patches into a runtime's Job templates.

Kubeflow Trainer merges each ``spec.runtimePatches[].trainingRuntimeSpec``
replicated-job patch into the runtime's replicated job of the same name the
way ``kubectl patch --type strategic`` would (docs/concepts.md#trainjob):
objects merge key by key, a ``null`` removes a key, the lists Kubernetes
declares with a merge key (containers by ``name``, env by ``name``, volume
mounts by ``mountPath``, ...) merge item by item, and every other list
(tolerations, command, args) is replaced.  kuota derives a TrainJob's pod sets
from that merge, so it follows the same rules.  Pure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

MERGE_KEYS: Final = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "schedulingGates": "name",
    "resourceClaims": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
}
"""The lists of a Job template (pod spec, containers) that Kubernetes merges by a key."""


def strategic_merge(base: object, patch: object) -> Any:
    """``patch`` merged into ``base`` (copies; neither argument changes): pure."""
    if not isinstance(base, Mapping) or not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = copy.deepcopy(dict(base))
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
            continue
        known = result.get(key)
        merge_key = MERGE_KEYS.get(key)
        if merge_key is not None and isinstance(value, list) and isinstance(known, list):
            result[key] = _merge_list(known, value, merge_key)
        elif isinstance(value, Mapping) and isinstance(known, Mapping):
            result[key] = strategic_merge(known, value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _merge_list(base: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    """Items of ``patch`` merged into the item of ``base`` with the same key, others appended."""
    result = copy.deepcopy(base)
    for item in patch:
        key = item.get(merge_key) if isinstance(item, Mapping) else None
        at = next(
            (
                index
                for index, known in enumerate(result)
                if key is not None and isinstance(known, Mapping) and known.get(merge_key) == key
            ),
            None,
        )
        if at is None:
            result.append(copy.deepcopy(item))
        else:
            result[at] = strategic_merge(result[at], item)
    return result


__all__ = ["MERGE_KEYS", "strategic_merge"]
