"""The chart's ``config`` value, its schema and its ConfigMap, from the Configuration's description.

The Configuration is described once (``scheduler/api/config_fields.py``);
the fields that carry a ``chart`` value are what the chart offers under
``config:``.  From them this module renders, for ``generate.py``:

* the ``config:`` block of ``values.yaml``: each value with its comment and
  default (the default is empty unless the description gives one);
* the ``config`` part of ``values.schema.json``: types, enums, required keys
  and the list or string bounds derived from the nodes, plus the keywords a
  value's ``chart.schema`` adds; objects refuse unknown keys, ``free`` values
  are plain objects;
* ``templates/configmap.yaml``: the file the processes read, built from the
  values: a value is set when not empty (or ``always``), an object when one of
  its values is (or when its switch is on); or, when
  ``managerConfig.controllerManagerConfigYaml`` is set (Kueue's chart value),
  that text verbatim instead.

Pure: every function returns text or data.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from scheduler.api.config_fields import CONFIGURATION
from scheduler.api.crds.nodes import (
    ChartValue,
    FreeNode,
    Leaf,
    ListNode,
    MapNode,
    Node,
    ObjectNode,
)
from scheduler.api.refs import CONFIG_V1BETA2

QUANTITY_PATTERN = (
    r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|e[+-]?[0-9]+)?$"
)
"""Helm's check of a quantity value (a string of this form or an integer)."""
_LEAF_TYPES = {
    "string": "string",
    "duration": "string",
    "timestamp": "string",
    "int32": "integer",
    "int64": "integer",
    "number": "number",
    "boolean": "boolean",
}
_KEY_ORDER = (
    "type",
    "anyOf",
    "minItems",
    "minLength",
    "pattern",
    "additionalProperties",
    "required",
    "enum",
    "items",
    "properties",
    "description",
)


def _values(node: ObjectNode) -> Iterator[tuple[str, Node, ChartValue]]:
    """The fields of ``node`` the chart offers, in description order."""
    for name, child in node.properties.items():
        if child.chart is not None:
            yield name, child, child.chart


def _is_group(node: Node, chart: ChartValue) -> bool:
    """An object the chart offers value by value (not a value of its own)."""
    return isinstance(node, ObjectNode) and not chart.free and any(_values(node))


# --- values.yaml ------------------------------------------------------------------------


def _comment(doc: str, indent: str) -> list[str]:
    first, *rest = doc.splitlines()
    return [f"{indent}# -- {first}"] + [f"{indent}# {line}" for line in rest]


def _empty(node: Node) -> Any:
    if isinstance(node, ListNode):
        return []
    if isinstance(node, Leaf) and node.type == "boolean":
        return False
    return {}


def _scalar(value: Any) -> str:
    return json.dumps(value) if isinstance(value, bool) else str(value)


def _value_lines(name: str, node: Node, chart: ChartValue, indent: str) -> list[str]:
    lines = _comment(chart.doc, indent)
    if _is_group(node, chart):
        assert isinstance(node, ObjectNode)
        lines.append(f"{indent}{name}:")
        if chart.switch is not None:
            switch, doc = chart.switch
            lines += _comment(doc, indent + "  ") + [f"{indent}  {switch}: false"]
        for child_name, child, child_chart in _values(node):
            lines += _value_lines(child_name, child, child_chart, indent + "  ")
        return lines
    value = _empty(node) if chart.default is None else chart.default
    if isinstance(value, list) and value:
        return lines + [f"{indent}{name}:"] + [f"{indent}  - {_scalar(item)}" for item in value]
    text = "[]" if value == [] else "{}" if value == {} else _scalar(value)
    return lines + [f"{indent}{name}: {text}"]


def values_block() -> str:
    """Pure: the ``config:`` block of ``values.yaml``."""
    lines = ["config:"]
    for name, node, chart in _values(CONFIGURATION):
        lines += _value_lines(name, node, chart, "  ")
    return "\n".join(lines) + "\n"


# --- values.schema.json -----------------------------------------------------------------


def _ordered(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(sorted(schema.items(), key=lambda item: _KEY_ORDER.index(item[0])))


def _schema(node: Node) -> dict[str, Any]:
    """Pure: the JSON schema of a value of ``node`` (a chart value, or inside one)."""
    schema: dict[str, Any]
    if isinstance(node, Leaf) and node.type == "quantity":
        schema = {"anyOf": [{"type": "string", "pattern": QUANTITY_PATTERN}, {"type": "integer"}]}
    elif isinstance(node, Leaf):
        schema = {"type": _LEAF_TYPES[node.type]}
        if node.values is not None:
            schema["enum"] = list(node.values)
    elif isinstance(node, ListNode):
        schema = {"type": "array", "items": _schema(node.item)}
    elif isinstance(node, MapNode):
        schema = {"type": "object", "additionalProperties": _schema(node.values)}
    elif isinstance(node, ObjectNode):
        schema = {"type": "object", "additionalProperties": False}
        if node.required:
            schema["required"] = list(node.required)
        schema["properties"] = {name: _schema(child) for name, child in node.properties.items()}
    else:
        assert isinstance(node, FreeNode)
        schema = {"type": "object"}
    if node.chart is not None:
        schema.update(node.chart.schema)
    return _ordered(schema)


def _value_schema(node: Node, chart: ChartValue) -> dict[str, Any]:
    schema: dict[str, Any]
    if chart.free:
        schema = {"type": "object"}
    elif _is_group(node, chart):
        assert isinstance(node, ObjectNode)
        properties: dict[str, Any] = {}
        if chart.switch is not None:
            switch, doc = chart.switch
            properties[switch] = {"type": "boolean", "description": " ".join(doc.splitlines())}
        for name, child, child_chart in _values(node):
            properties[name] = _value_schema(child, child_chart)
        schema = {"type": "object", "additionalProperties": False, "properties": properties}
    else:
        schema = _schema(node)
    if chart.doc:
        schema["description"] = " ".join(chart.doc.splitlines())
    return _ordered(schema)


def values_schema() -> dict[str, Any]:
    """Pure: the ``config`` property of ``values.schema.json``."""
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            name: _value_schema(node, chart) for name, node, chart in _values(CONFIGURATION)
        },
    }


# --- templates/configmap.yaml -----------------------------------------------------------


def _render(name: str, node: Node, chart: ChartValue, source: str, target: str) -> list[str]:
    """Template lines that set ``name`` in the dict ``target`` from the value ``source``."""
    value = f"{source}.{name}"
    if not _is_group(node, chart):
        if chart.always:
            return [f'{{{{- $_ := set {target} "{name}" {value} }}}}']
        return [
            f"{{{{- with {value} }}}}",
            f'{{{{- $_ := set {target} "{name}" . }}}}',
            "{{- end }}",
        ]
    assert isinstance(node, ObjectNode)
    inner = f"${name}"
    lines = [f"{{{{- {inner} := dict }}}}"]
    for child_name, child, child_chart in _values(node):
        lines += _render(child_name, child, child_chart, value, inner)
    if chart.switch is not None:
        lines.append(f'{{{{- $_ := set {target} "{name}" {inner} }}}}')
        return [f"{{{{- if {value}.{chart.switch[0]} }}}}", *lines, "{{- end }}"]
    return lines + [
        f"{{{{- with {inner} }}}}",
        f'{{{{- $_ := set {target} "{name}" . }}}}',
        "{{- end }}",
    ]


def configmap_template(header: str) -> str:
    """Pure: ``templates/configmap.yaml`` (``header``: the generated-file notice)."""
    lines = [
        f"{{{{/* {header} */}}}}",
        '{{- include "kuota.validate" . }}',
        "{{- $c := .Values.config }}",
        f'{{{{- $configuration := dict "apiVersion" "{CONFIG_V1BETA2}" "kind" "Configuration" '
        '"namespace" .Release.Namespace }}',
    ]
    for name, node, chart in _values(CONFIGURATION):
        lines += _render(name, node, chart, "$c", "$configuration")
    lines += [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        '  name: {{ include "kuota.configName" . }}',
        "  namespace: {{ .Release.Namespace }}",
        '  labels: {{- include "kuota.labels" . | nindent 4 }}',
        "data:",
        "  # The Kueue Configuration the processes read with --config (and check at start).",
        "  controller_manager_config.yaml: |",
        "    {{- with .Values.managerConfig.controllerManagerConfigYaml }}",
        "    {{- . | nindent 4 }}",
        "    {{- else }}",
        "    {{- toYaml $configuration | nindent 4 }}",
        "    {{- end }}",
    ]
    return "\n".join(lines) + "\n"
