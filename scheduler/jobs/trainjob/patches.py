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


def _without_nulls(value: object) -> Any:
    """A copy of a value the patch adds whole: its ``null`` keys dropped, as Kubernetes does."""
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return copy.deepcopy(value)


def strategic_merge(base: object, patch: object) -> Any:
    """``patch`` merged into ``base`` (copies; neither argument changes): pure."""
    if not isinstance(base, Mapping) or not isinstance(patch, Mapping):
        return _without_nulls(patch)
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
            result[key] = _without_nulls(value)
    return result


def _merge_list(base: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    """``patch``'s items merged into ``base``'s of the same key, in Kubernetes' order.

    The patch's items (merged with their namesakes, or new) and the items only
    ``base`` has are interleaved as ``base`` orders them; an item ``base`` does
    not have comes as early as the patch's order allows (``mergeSortedSlice``).
    """

    def key_of(item: object) -> str | int | None:
        """The item's merge key; None for an item without a scalar one (never matched)."""
        key = item.get(merge_key) if isinstance(item, Mapping) else None
        return key if isinstance(key, str | int) and not isinstance(key, bool) else None

    base_keys = [key_of(item) for item in base]

    def position(item: object) -> int:
        key = key_of(item)
        return base_keys.index(key) if key is not None and key in base_keys else -1

    patched = []
    for item in patch:
        at = position(item)
        patched.append(strategic_merge(base[at], item) if at >= 0 else _without_nulls(item))
    patch_keys = {key_of(item) for item in patch} - {None}
    server_only = [copy.deepcopy(item) for item in base if key_of(item) not in patch_keys]
    result: list[Any] = []
    left, right = 0, 0
    while left < len(server_only) or right < len(patched):
        if right >= len(patched):
            result.append(server_only[left])
            left += 1
        elif left >= len(server_only):
            result.append(patched[right])
            right += 1
        else:
            earlier, later = position(server_only[left]), position(patched[right])
            if earlier >= 0 and later >= 0 and earlier < later:
                result.append(server_only[left])
                left += 1
            else:
                result.append(patched[right])
                right += 1
    return result


__all__ = ["MERGE_KEYS", "strategic_merge"]
