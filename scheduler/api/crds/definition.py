"""What one CustomResourceDefinition says, before it becomes YAML.

A :class:`KindDefinition` holds the names of a kind and one
:class:`VersionDefinition` per served API version (schema, printer columns,
whether it has a status subresource).  ``generate.py`` turns these into
``apiextensions.k8s.io/v1`` objects; the kind modules only describe.

Version policy (docs/api-differences.md#api-versions-served): ``v1beta2`` is
the storage version of every kind;
``v1alpha1``/``v1alpha2`` exist only for the four kinds of Kueue v0.1/v0.2
(ClusterQueue, LocalQueue, ResourceFlavor, Workload) and ``v1beta1`` for every
kind.  Every version other than ``v1beta2`` is served with a deprecation
warning that names ``v1beta2``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from scheduler.api import refs
from scheduler.api.crds.nodes import ObjectNode

Scope = Literal["Cluster", "Namespaced"]
GROUP = refs.KUEUE_GROUP
ColumnType = Literal["string", "integer", "number", "boolean", "date"]


@dataclass(frozen=True)
class PrinterColumn:
    """One ``additionalPrinterColumns`` entry; ``wide`` means priority 1."""

    name: str
    json_path: str
    type: ColumnType
    description: str = ""
    wide: bool = False

    def render(self) -> dict[str, Any]:
        """Pure: the column as it appears in the CRD."""
        column: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.description:
            column["description"] = self.description
        column["jsonPath"] = self.json_path
        if self.wide:
            column["priority"] = 1
        return column


AGE = PrinterColumn("Age", ".metadata.creationTimestamp", "date", "Time since creation.")


def condition_status_column(name: str, condition_type: str, description: str) -> PrinterColumn:
    """Pure: a column showing the status of one condition type."""
    return PrinterColumn(
        name, f'.status.conditions[?(@.type=="{condition_type}")].status', "string", description
    )


@dataclass(frozen=True)
class VersionDefinition:
    """One served version of a kind; ``schema`` is the description of its root."""

    name: str
    schema: ObjectNode
    columns: tuple[PrinterColumn, ...] = ()
    status_subresource: bool = False
    selectable_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class KindDefinition:
    """A kind with its names and served versions."""

    kind: str
    plural: str
    scope: Scope
    short_names: tuple[str, ...]
    versions: tuple[VersionDefinition, ...] = field(default_factory=tuple)

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{GROUP}"
