"""``metrics.customLabels``: object labels made metric labels (docs/metrics.md#custom-labels).

With the ``CustomMetricLabels`` gate on, each entry names a label (or an
annotation) of a ClusterQueue, LocalQueue, Cohort or Workload whose value
becomes an extra ``custom_<name>`` label on the series of that kind of
object.  A Workload has no such label of its own: it is copied from its job
when the Workload is created, so the entries of kind ``Workload`` also widen
what is copied (:func:`copied_metadata`).

The entries are read here from the raw ``metrics`` section, once the file
passed its checks (docs/validation.md#configuration); the functions are pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from scheduler.api.config import Configuration
from scheduler.api.feature_gates import enabled
from scheduler.api.refs import CUSTOM_LABEL_SOURCE_KINDS as SOURCE_KINDS
from scheduler.api.refs import CustomLabelSourceKind as SourceKind

DEFAULT_SOURCE_KIND: Final[SourceKind] = "ClusterQueue"
UNTRACKED_VALUE: Final = "kueue.x-k8s.io/_UNTRACKED_VALUE_"
"""The value reported for one ``trackedValues`` does not list."""
GATE: Final = "CustomMetricLabels"


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomLabel:
    """One ``metrics.customLabels`` entry, defaults applied."""

    name: str
    source_kind: SourceKind = DEFAULT_SOURCE_KIND
    label_key: str = ""
    """The object label read; ``name`` when neither key is given."""
    annotation_key: str = ""
    tracked_values: tuple[str, ...] = ()
    """Values reported as they are; any other one is :data:`UNTRACKED_VALUE` (empty: all)."""

    @property
    def metric_label(self) -> str:
        return f"custom_{self.name}"

    def value_of(self, labels: Mapping[str, str], annotations: Mapping[str, str]) -> str:
        """This label's value for an object with these labels and annotations: pure."""
        if self.annotation_key:
            value = annotations.get(self.annotation_key, "")
        else:
            value = labels.get(self.label_key or self.name, "")
        if self.tracked_values and value not in self.tracked_values:
            return UNTRACKED_VALUE
        return value


@dataclass(frozen=True, slots=True)
class CustomLabels:
    """The entries in effect (none while the gate is off)."""

    entries: tuple[CustomLabel, ...] = ()

    @classmethod
    def from_configuration(cls, config: Configuration | None) -> CustomLabels:
        """The entries a Configuration asks for, if its gate is on: pure."""
        if config is None or not enabled(config.feature_gates, GATE):
            return cls()
        section = config.operational.get("metrics") or {}
        raw = section.get("customLabels") if isinstance(section, Mapping) else None
        return cls(tuple(_entry(item) for item in raw or () if isinstance(item, Mapping)))

    def of_kind(self, kind: SourceKind) -> tuple[CustomLabel, ...]:
        return tuple(entry for entry in self.entries if entry.source_kind == kind)

    def names(self, kinds: tuple[SourceKind, ...]) -> tuple[str, ...]:
        """The metric label names for objects of ``kinds``, in series order: pure."""
        return tuple(
            entry.metric_label
            for kind in SOURCE_KINDS
            if kind in kinds
            for entry in self.of_kind(kind)
        )

    def values(
        self, kind: SourceKind, labels: Mapping[str, str], annotations: Mapping[str, str]
    ) -> dict[str, str]:
        """Metric label name -> value, for one object of ``kind``: pure."""
        return {e.metric_label: e.value_of(labels, annotations) for e in self.of_kind(kind)}

    def unknown(self, kind: SourceKind) -> dict[str, str]:
        """The values for an object not (or no longer) known: empty, as Kueue reports: pure."""
        return dict.fromkeys((e.metric_label for e in self.of_kind(kind)), "")


@dataclass(frozen=True, slots=True)
class CopiedMetadata:
    """What of a job's metadata its new Workload carries."""

    labels: tuple[str, ...] = ()
    """Label keys: ``integrations.labelKeysToCopy`` and the Workload custom labels' keys."""
    annotations: tuple[str, ...] = ()
    """Annotation keys: the Workload custom labels' ``sourceAnnotationKey``s."""


NOTHING_COPIED: Final = CopiedMetadata()


def copied_metadata(config: Configuration | None) -> CopiedMetadata:
    """The label and annotation keys a new Workload copies from its job: pure."""
    if config is None:
        return CopiedMetadata()
    labels = dict.fromkeys(config.integrations.label_keys_to_copy)
    annotations: dict[str, None] = {}
    for entry in CustomLabels.from_configuration(config).of_kind("Workload"):
        if entry.annotation_key:
            annotations[entry.annotation_key] = None
        else:
            labels[entry.label_key or entry.name] = None
    return CopiedMetadata(tuple(labels), tuple(annotations))


def _entry(raw: Mapping[str, Any]) -> CustomLabel:
    kind = raw.get("sourceKind") or DEFAULT_SOURCE_KIND
    return CustomLabel(
        name=str(raw.get("name") or ""),
        source_kind=kind if kind in SOURCE_KINDS else DEFAULT_SOURCE_KIND,
        label_key=str(raw.get("sourceLabelKey") or ""),
        annotation_key=str(raw.get("sourceAnnotationKey") or ""),
        tracked_values=tuple(str(value) for value in raw.get("trackedValues") or ()),
    )


__all__ = [
    "DEFAULT_SOURCE_KIND",
    "GATE",
    "NOTHING_COPIED",
    "SOURCE_KINDS",
    "UNTRACKED_VALUE",
    "CopiedMetadata",
    "CustomLabel",
    "CustomLabels",
    "SourceKind",
    "copied_metadata",
]
