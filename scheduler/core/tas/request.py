"""A pod set's topology request, read from ``podSets[i].topologyRequest`` (pure).

See docs/concepts.md#topology-aware-scheduling.  The Workload keeps the
request as raw JSON (the API server's schema checked its shape); this
module turns it into the typed form placement reads, once per pod-set shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SliceLayer:
    """Pods grouped ``size`` at a time, each group inside one domain of level ``level``."""

    level: str
    size: int


@dataclass(frozen=True, slots=True)
class TopologyRequest:
    """What a pod set asks of the topology (absent fields are ``None``)."""

    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None
    pod_index_label: str | None = None
    sub_group_index_label: str | None = None
    sub_group_count: int | None = None
    group: str | None = None
    """``podSetGroupName``: pod sets placed together (a leader and its workers)."""
    slice_level: str | None = None
    slice_size: int | None = None
    slice_layers: tuple[SliceLayer, ...] = ()
    """``podsetSliceRequiredTopologyConstraints``, outermost first."""

    @property
    def explicit(self) -> bool:
        """Whether the pod set asks for topology-aware scheduling itself: pure."""
        return (
            self.unconstrained is not None
            or self.required is not None
            or self.preferred is not None
            or self.slice_level is not None
            or self.slice_size is not None
            or bool(self.slice_layers)
        )

    @property
    def layers(self) -> tuple[SliceLayer, ...]:
        """Every slice layer, outermost first (the single-layer fields as one layer): pure."""
        if self.slice_layers:
            return self.slice_layers
        if self.slice_level is None:
            return ()
        return (SliceLayer(self.slice_level, self.slice_size or 0),)

    @property
    def slice_only(self) -> bool:
        """Slices requested without a required or preferred level: pure."""
        return self.required is None and self.preferred is None and bool(self.layers)


def _text(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) else None


def _number(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_topology_request(raw: Mapping[str, Any] | None) -> TopologyRequest | None:
    """The typed request of a pod set's ``topologyRequest``; ``None`` when absent: pure."""
    if not raw:
        return None
    unconstrained = raw.get("unconstrained")
    layers = tuple(
        SliceLayer(str(item.get("topology") or ""), _number(item, "size") or 0)
        for item in raw.get("podsetSliceRequiredTopologyConstraints") or ()
        if isinstance(item, Mapping)
    )
    return TopologyRequest(
        required=_text(raw, "required"),
        preferred=_text(raw, "preferred"),
        unconstrained=unconstrained if isinstance(unconstrained, bool) else None,
        pod_index_label=_text(raw, "podIndexLabel"),
        sub_group_index_label=_text(raw, "subGroupIndexLabel"),
        sub_group_count=_number(raw, "subGroupCount"),
        group=_text(raw, "podSetGroupName"),
        slice_level=_text(raw, "podSetSliceRequiredTopology"),
        slice_size=_number(raw, "podSetSliceSize"),
        slice_layers=layers,
    )


__all__ = ["SliceLayer", "TopologyRequest", "read_topology_request"]
