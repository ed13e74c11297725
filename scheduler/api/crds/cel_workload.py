"""The Workload rules the API server enforces itself, as CEL in the CRD.

Each rule here has a Python twin with the same id in
``scheduler/api/validation/`` (``workload.py``, ``workload_status.py``,
``workload_updates.py``): the API
server runs the CEL rule on every write, so an ordinary Workload create needs
no webhook round trip (docs/validation.md#rules-enforced-by-the-api-server);
``kuota validate`` runs the twin offline, where no API server is there to ask.
Both answer with the text of ``scheduler/api/rule_text.py``; a dynamic message
is rebuilt with ``messageExpression`` from the same pieces.

CEL's cost estimate must stay within the API server's budget: every list a
rule walks has a ``maxItems`` and every string a regular expression reads has
a ``maxLength`` (the limits the Python rules already enforce), set where the
nodes are built.  The rules that need the object's metadata (annotations),
the free-form pod templates or another object stay in the webhook.
"""

from __future__ import annotations

from typing import Final

from scheduler.api import rule_text as text
from scheduler.api.crds.cel_kit import message_format as _format
from scheduler.api.crds.cel_kit import whole_match as _matches
from scheduler.api.crds.nodes import Cel

MAX_POD_SETS: Final = 18
MAX_PREEMPTION_GATES: Final = 8
MAX_NOMINATED_CLUSTERS: Final = 20
MAX_CLUSTER_NAME: Final = 256
MAX_CONDITIONS: Final = 16
LABEL_LENGTH: Final = 63
SUBDOMAIN_LENGTH: Final = 253


POD_SET_NAME: Final = Cel(
    twin="WL-3",
    rule=_matches(text.DNS_LABEL),
    message_expression=_format(
        '"{name}" is not a valid pod set name: ' + text.LABEL_HINT, name="self"
    ),
)
COUNT: Final = Cel(
    twin="WL-6",
    rule="!has(self.count) || self.count >= 0",
    message=text.COUNT_NOT_NEGATIVE,
    field_path=".count",
)
MIN_COUNT: Final = Cel(
    twin="WL-7",
    rule="!has(self.minCount) || self.minCount >= 1",
    message=text.MIN_COUNT_AT_LEAST_ONE,
    field_path=".minCount",
)
MIN_COUNT_WITHIN_COUNT: Final = Cel(
    twin="WL-8",
    rule="!has(self.minCount) || !has(self.count) || self.minCount <= self.count",
    message_expression=_format(text.MIN_COUNT_ABOVE_COUNT, count="string(self.count)"),
    field_path=".minCount",
)
ONE_MIN_COUNT: Final = Cel(
    twin="WL-9",
    rule="self.filter(p, has(p.minCount)).size() <= 1",
    message_expression=_format(
        text.MIN_COUNT_TWICE, count="string(self.filter(p, has(p.minCount)).size())"
    ),
)
POD_SETS_LISTED: Final = Cel(
    twin="WL-1",
    rule="has(self.podSets) && size(self.podSets) >= 1",
    message=text.AT_LEAST_ONE_POD_SET,
    field_path=".podSets",
)
QUEUE_NAME: Final = Cel(
    twin="WL-14",
    rule="self == '' || " + _matches(text.DNS_SUBDOMAIN),
    message_expression=_format(
        '"{name}" is not a valid LocalQueue name: ' + text.SUBDOMAIN_HINT, name="self"
    ),
)
PRIORITY_CLASS_NAME: Final = Cel(
    twin="WL-15",
    rule="self == '' || " + _matches(text.DNS_SUBDOMAIN),
    message_expression=_format(
        '"{name}" is not a valid priority class name: ' + text.SUBDOMAIN_HINT, name="self"
    ),
)
KIND_OF_GROUP: Final = Cel(
    twin="WL-16",
    rule="(self.group == 'kueue.x-k8s.io' && self.kind == 'WorkloadPriorityClass') || "
    "(self.group == 'scheduling.k8s.io' && self.kind == 'PriorityClass')",
    message_expression=_format(text.KIND_NOT_OF_GROUP, kind="self.kind", group="self.group"),
    field_path=".kind",
)
PRIORITY_WITH_CLASS: Final = Cel(
    twin="WL-17",
    rule="!has(self.priorityClassRef) || has(self.priority)",
    message=text.PRIORITY_NEEDED,
    field_path=".priority",
)
EXECUTION_TIME: Final = Cel(
    twin="WL-18", rule="self >= 1", message=text.EXECUTION_TIME_AT_LEAST_ONE
)
GATE_NAME: Final = Cel(
    twin="WL-19",
    rule=f"size(self.name) >= 1 && size(self.name) <= {LABEL_LENGTH}",
    message=text.GATE_NAME_LENGTH,
    field_path=".name",
)
CLUSTER_EXCLUSIVE: Final = Cel(
    twin="WL-40",
    rule="!has(self.clusterName) || self.clusterName == '' || "
    "!has(self.nominatedClusterNames) || size(self.nominatedClusterNames) == 0",
    message=text.CLUSTER_NAME_EXCLUSIVE,
    field_path=".clusterName",
)


def _condition_true(var: str, kind: str) -> str:
    """CEL: ``var`` (the whole Workload) has condition ``kind`` with status True."""
    return (
        f"(has({var}.status) && has({var}.status.conditions) && "
        f"{var}.status.conditions.exists(c, c.type == '{kind}' && has(c.status) && "
        "c.status == 'True'))"
    )


def _has_spec(var: str, name: str) -> str:
    return f"(has({var}.spec) && has({var}.spec.{name}))"


def _both(kind: str) -> str:
    return f"({_condition_true('oldSelf', kind)} && {_condition_true('self', kind)})"


_RESERVED_BEFORE: Final = _condition_true("oldSelf", "QuotaReserved")
_BOTH_REFS: Final = (
    f"({_RESERVED_BEFORE} && {_has_spec('self', 'priorityClassRef')} && "
    f"{_has_spec('oldSelf', 'priorityClassRef')})"
)


def _is_priority_class(var: str) -> str:
    ref = f"{var}.spec.priorityClassRef"
    return f"({ref}.group == 'scheduling.k8s.io' && {ref}.kind == 'PriorityClass')"


def _ref_field_kept(name: str) -> Cel:
    return Cel(
        twin="WL-54",
        rule=f"!{_BOTH_REFS} || "
        f"self.spec.priorityClassRef.{name} == oldSelf.spec.priorityClassRef.{name}",
        message=text.REF_FIELD_WHILE_RESERVED,
        field_path=f".spec.priorityClassRef.{name}",
    )


def _execution_time(var: str) -> str:
    name = "maximumExecutionTimeSeconds"
    return f"({_has_spec(var, name)} ? {var}.spec.{name} : 0)"


QUEUE_NAME_KEPT: Final = Cel(
    twin="WL-52",
    rule=f"!{_both('QuotaReserved')} || "
    f"({_has_spec('self', 'queueName')} == {_has_spec('oldSelf', 'queueName')} && "
    f"(!{_has_spec('self', 'queueName')} || self.spec.queueName == oldSelf.spec.queueName))",
    message_expression=_format(
        text.QUEUE_NAME_WHILE_RESERVED,
        old=f"{_has_spec('oldSelf', 'queueName')} ? oldSelf.spec.queueName : ''",
    ),
    field_path=".spec.queueName",
)
REF_KEPT: Final = Cel(
    twin="WL-53",
    rule=f"!{_RESERVED_BEFORE} || "
    f"{_has_spec('self', 'priorityClassRef')} == {_has_spec('oldSelf', 'priorityClassRef')}",
    message=text.REF_ADDED_WHILE_RESERVED,
    field_path=".spec.priorityClassRef",
)
PRIORITY_CLASS_KEPT: Final = Cel(
    twin="WL-55",
    rule=f"!({_BOTH_REFS} && {_is_priority_class('self')} && {_is_priority_class('oldSelf')}) || "
    "self.spec.priorityClassRef.name == oldSelf.spec.priorityClassRef.name",
    message=text.PRIORITY_CLASS_WHILE_RESERVED,
    field_path=".spec.priorityClassRef.name",
)
EXECUTION_TIME_KEPT: Final = Cel(
    twin="WL-56",
    rule=f"!{_both('Admitted')} || {_execution_time('self')} == {_execution_time('oldSelf')}",
    message=text.EXECUTION_TIME_WHILE_ADMITTED,
    field_path=".spec.maximumExecutionTimeSeconds",
)
CLUSTER_NAME_KEPT: Final = Cel(
    twin="WL-60",
    rule="!has(oldSelf.clusterName) || oldSelf.clusterName == '' || !has(self.clusterName) || "
    "self.clusterName == '' || self.clusterName == oldSelf.clusterName",
    message_expression=_format(text.CLUSTER_NAME_SET, old="oldSelf.clusterName"),
    field_path=".clusterName",
)
WHILE_RESERVED: Final = (
    QUEUE_NAME_KEPT,
    REF_KEPT,
    _ref_field_kept("group"),
    _ref_field_kept("kind"),
    PRIORITY_CLASS_KEPT,
    EXECUTION_TIME_KEPT,
)
"""The update rules on the whole Workload (``oldSelf``: the stored object)."""

EVERY_RULE: Final = (
    POD_SETS_LISTED,
    POD_SET_NAME,
    COUNT,
    MIN_COUNT,
    MIN_COUNT_WITHIN_COUNT,
    ONE_MIN_COUNT,
    QUEUE_NAME,
    PRIORITY_CLASS_NAME,
    KIND_OF_GROUP,
    PRIORITY_WITH_CLASS,
    EXECUTION_TIME,
    GATE_NAME,
    CLUSTER_EXCLUSIVE,
    CLUSTER_NAME_KEPT,
    *WHILE_RESERVED,
)
"""Every Workload CEL rule, for the tests that hold each against its twin."""
