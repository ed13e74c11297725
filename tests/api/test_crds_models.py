"""The CRD schemas agree with kuota's other descriptions of the v1beta2 API.

DESIGN.md asks for one source of truth for the schemas, or a test that fails
when the sources disagree.  kuota has three descriptions of every v1beta2
kind: the CRD schemas (``scheduler.api.crds``), the known-field table behind
the webhook's type and unknown-field checks
(``scheduler.api.validation.known_fields``), and the typed models
(``scheduler.api.models``).  A field the API server prunes but the webhook
accepts, or one the models read but the CRD drops, is a silent data loss:
these tests make it loud.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

import pytest

from scheduler.api import models
from scheduler.api.crds import load_crds
from scheduler.api.validation.known_fields import KNOWN_FIELDS
from scheduler.api.validation.shape import ListOf, MapOf, Obj, Scalar, Shape

V1BETA2 = {
    crd["spec"]["names"]["kind"]: next(
        v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"] if v["name"] == "v1beta2"
    )
    for crd in load_crds()
}
KINDS = sorted(V1BETA2)


# --- known-field table ----------------------------------------------------------


def shape_disagreements(shape: Shape, node: dict[str, Any], path: str) -> list[str]:
    """Pure: where the webhook's shape table and the CRD schema disagree."""
    if shape is Scalar.ANY:
        return []
    if isinstance(shape, Scalar):
        if shape is Scalar.QTY:
            ok = node.get("x-kubernetes-int-or-string") is True
        else:
            expected = {
                Scalar.STR: "string",
                Scalar.INT: "integer",
                Scalar.BOOL: "boolean",
                Scalar.NUMBER: "number",
            }[shape]
            ok = node.get("type") == expected
        return [] if ok else [f"{path}: table says {shape.name}, CRD says {node}"]
    if isinstance(shape, ListOf):
        if node.get("type") != "array":
            return [f"{path}: table says list, CRD says {node.get('type')}"]
        return shape_disagreements(shape.item, node["items"], f"{path}[]")
    if isinstance(shape, MapOf):
        if not isinstance(node.get("additionalProperties"), dict):
            return [f"{path}: table says map, CRD has no additionalProperties"]
        return shape_disagreements(shape.value, node["additionalProperties"], f"{path}{{}}")
    assert isinstance(shape, Obj)
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return [] if shape.open else [f"{path}: CRD keeps unknown fields, table is closed"]
    if shape.open:
        return [f"{path}: table is open, CRD prunes unknown fields"]
    properties = node.get("properties", {})
    problems = []
    if set(shape.fields) != set(properties):
        problems.append(
            f"{path}: only in table {sorted(set(shape.fields) - set(properties))}, "
            f"only in CRD {sorted(set(properties) - set(shape.fields))}"
        )
    for name in set(shape.fields) & set(properties):
        problems += shape_disagreements(shape.fields[name], properties[name], f"{path}.{name}")
    return problems


@pytest.mark.parametrize("kind", KINDS)
def test_crd_schema_matches_the_webhook_known_field_table(kind: str) -> None:
    table = KNOWN_FIELDS[kind]
    schema = V1BETA2[kind]
    # ObjectMeta is the API server's business; the CRD root says only {type: object}.
    fields = {name: shape for name, shape in table.fields.items() if name != "metadata"}
    root_properties = {k: v for k, v in schema["properties"].items() if k != "metadata"}
    if "status" not in root_properties:
        # The table accepts (and ignores) a status on every kind; the CRD has none to keep.
        fields.pop("status", None)
    problems = shape_disagreements(
        Obj(fields), {"type": "object", "properties": root_properties}, kind
    )
    assert problems == []


def test_the_comparison_notices_a_field_missing_from_the_crd() -> None:
    table = Obj({"spec": Obj({"cohortName": Scalar.STR, "extra": Scalar.INT})})
    node = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"cohortName": {"type": "integer"}}}
        },
    }
    assert shape_disagreements(table, node, "CQ") == [
        "CQ.spec: only in table ['extra'], only in CRD []",
        "CQ.spec.cohortName: table says STR, CRD says {'type': 'integer'}",
    ]


# --- typed models -----------------------------------------------------------------

# Model fields that are not a same-named field of the CRD at the same place, and why.
MODEL_ONLY = {
    "LocalQueueStatus.weighted_share": "flattened from status.fairSharing.weightedShare",
    "WorkloadStatus.evictions": "flattened from status.schedulingStats.evictions",
}
SKIPPED_ROOT_FIELDS = {"kind", "api_version", "metadata"}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def dataclass_inside(annotation: Any) -> type | None:
    """Pure: the dataclass an annotation holds (through Optional and tuples), if any."""
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, tuple):
        for argument in typing.get_args(annotation):
            found = dataclass_inside(argument)
            if found is not None:
                return found
    return None


def model_disagreements(
    model: type, node: dict[str, Any], path: str, root: bool = False
) -> list[str]:
    """Pure: model fields that the CRD schema would prune at that place."""
    if node.get("x-kubernetes-preserve-unknown-fields") or "properties" not in node:
        return []
    hints = typing.get_type_hints(model)
    problems = []
    for model_field in dataclasses.fields(model):
        if root and model_field.name in SKIPPED_ROOT_FIELDS:
            continue
        if f"{model.__name__}.{model_field.name}" in MODEL_ONLY:
            continue
        child = node["properties"].get(camel(model_field.name))
        if child is None:
            problems.append(f"{path}.{camel(model_field.name)} ({model.__name__})")
            continue
        inner = dataclass_inside(hints[model_field.name])
        if inner is None:
            continue
        if child.get("type") == "array":
            child = child["items"]
        problems += model_disagreements(inner, child, f"{path}.{camel(model_field.name)}")
    return problems


@pytest.mark.parametrize("kind", KINDS)
def test_every_model_field_survives_the_crd_schema(kind: str) -> None:
    model = getattr(models, kind)
    assert model_disagreements(model, V1BETA2[kind], kind, root=True) == []


def test_the_model_comparison_notices_a_field_the_crd_would_prune() -> None:
    @dataclasses.dataclass
    class Spec:
        cohort_name: str = ""
        surprise_field: int = 0

    node = {"type": "object", "properties": {"cohortName": {"type": "string"}}}
    assert model_disagreements(Spec, node, "CQ.spec") == ["CQ.spec.surpriseField (Spec)"]
