"""Which Workload writes skip kuota's validating webhook: its match conditions (pure).

A Workload write costs a webhook round trip only where the webhook can say
more than the API server already does (docs/architecture.md#the-webhook):
the scheduler's own status writes, status writes whose judged fields the
rules pass as they are, and creates the CRD's own rules judge are let through
by CEL in the registration (:mod:`webhook.configurations`).
"""

from __future__ import annotations

from typing import Final

from scheduler.api.refs import (
    ADMISSION_GATED_BY_ANNOTATION,
    ELASTIC_JOB_ANNOTATION,
    PRIORITY_BOOST_ANNOTATION,
)
from scheduler.api.validation.workload_status import (
    CONDITION_STATUSES,
    JUDGED_STATUS_FIELDS,
    MAX_CONDITIONS,
    MAX_MESSAGE_CHARACTERS,
    MAX_REASON_CHARACTERS,
    REASON_PATTERN,
    REQUIRED_CONDITION_FIELDS,
)


def not_the_schedulers_status_write(identity: str) -> dict[str, str]:
    """Pure: the match condition that lets ``identity``'s status writes skip a webhook."""
    return {
        "name": "not-the-schedulers-status-write",
        # subResource is absent (not "") on a request for the object itself: has() first.
        "expression": "!(has(request.subResource) && request.subResource == 'status' && "
        f"request.userInfo.username == '{identity}')",
    }


def _status_has(var: str, field: str) -> str:
    return f"(has({var}.status) && has({var}.status.{field}))"


def _quota_reserved(var: str) -> str:
    return (
        f"({_status_has(var, 'conditions')} && {var}.status.conditions.exists(c, "
        "has(c.type) && c.type == 'QuotaReserved' && has(c.status) && c.status == 'True'))"
    )


def _valid_condition(var: str) -> str:
    """WL-35 for one condition, in CEL, from the constants the webhook's rule uses."""
    statuses = ", ".join(f"'{status}'" for status in CONDITION_STATUSES)
    present = " && ".join(
        f"has({var}.{field}) && {var}.{field} != ''" for field in REQUIRED_CONDITION_FIELDS
    )
    return (
        f"{present} && {var}.status in [{statuses}] && "
        f"size({var}.reason) <= {MAX_REASON_CHARACTERS} && "
        f"{var}.reason.matches('^{REASON_PATTERN}$') && "
        f"(!has({var}.message) || size({var}.message) <= {MAX_MESSAGE_CHARACTERS}) && "
        f"(!has({var}.observedGeneration) || {var}.observedGeneration >= 0)"
    )


def not_a_status_write_the_rules_pass_as_is() -> dict[str, str]:
    """Pure: the match condition that lets a harmless Workload status write skip the webhook.

    A ``v1beta2`` write to ``workloads/status`` that keeps every status field the rules
    read (:data:`JUDGED_STATUS_FIELDS`) and whether QuotaReserved is True, and whose
    conditions are each valid (WL-35), cannot break a rule the old object passed: the
    API server keeps spec and metadata on the status subresource.  Such writes are how
    the tools that run Workloads report on them (Kueue's job reconcilers and benchmark
    runner set ``Finished``, ``PodsReady``, ``requeueState``), one per Workload or more;
    sparing each a round trip keeps the webhook's latency out of theirs.  Like the API
    server's own validation ratcheting, a field left as it was is not judged again.
    Every other status write, a legacy version's included, is still sent to kuota, which
    answers with the rule's own message.
    """
    same = " && ".join(
        f"({_status_has('object', field)} ? ({_status_has('oldObject', field)} && "
        f"object.status.{field} == oldObject.status.{field}) : "
        f"!{_status_has('oldObject', field)})"
        for field in JUDGED_STATUS_FIELDS
    )
    conditions = (
        f"(!{_status_has('object', 'conditions')} || "
        f"(size(object.status.conditions) <= {MAX_CONDITIONS} && "
        f"object.status.conditions.all(c, {_valid_condition('c')})))"
    )
    return {
        "name": "not-a-status-write-the-rules-pass-as-is",
        "expression": "!(has(request.subResource) && request.subResource == 'status' && "
        "request.operation == 'UPDATE' && request.kind.version == 'v1beta2' && "
        f"oldObject != null && {same} && "
        f"{_quota_reserved('object')} == {_quota_reserved('oldObject')} && {conditions})",
    }


_WEBHOOK_ANNOTATIONS: Final = (
    ADMISSION_GATED_BY_ANNOTATION,
    ELASTIC_JOB_ANNOTATION,
    PRIORITY_BOOST_ANNOTATION,
)
PLAIN_QUANTITY: Final = r"^[0-9]+(\.[0-9]+)?(m|[kMGTPE]|[KMGTPE]i)?$"
"""A non-negative quantity in its common spellings; anything else is left to the webhook."""


def _is(var: str, kind: str) -> str:
    return f"type({var}) == {kind}"


def _plain_amounts(var: str) -> str:
    """CEL: requests or limits without the reserved ``pods`` and with no negative amount."""
    value = f"{var}[r]"
    return (
        f"{_is(var, 'map')} && {var}.all(r, r != 'pods' && "
        f"(({_is(value, 'string')} && {value}.matches(r'{PLAIN_QUANTITY}')) || "
        f"({_is(value, 'int')} && {value} >= 0)))"
    )


def _plain_resources(var: str) -> str:
    """CEL: ``var`` (a container or a pod spec) has no ``resources`` a rule could refuse."""
    resources = f"{var}.resources"
    return (
        f"{_is(var, 'map')} && (!has({resources}) || ({_is(resources, 'map')} && "
        f"{resources}.all(f, f in ['requests', 'limits']) && "
        f"(!has({resources}.requests) || ({_plain_amounts(f'{resources}.requests')})) && "
        f"(!has({resources}.limits) || ({_plain_amounts(f'{resources}.limits')}))))"
    )


def _plain_pod_set(var: str) -> str:
    """CEL: a pod set whose template no webhook rule can refuse (WL-5, WL-11 to WL-13)."""
    template, spec = f"{var}.template", f"{var}.template.spec"
    metadata = f"{template}.metadata"
    return (
        f"{_is(var, 'map')} && has({template}) && {_is(template, 'map')} && "
        f"{template}.all(k, k in ['metadata', 'spec']) && "
        f"(!has({metadata}) || ({_is(metadata, 'map')} && !has({metadata}.labels) && "
        f"!has({metadata}.annotations))) && "
        f"has({spec}) && {_is(spec, 'map')} && "
        f"(!has({spec}.nodeSelector) || ({_is(f'{spec}.nodeSelector', 'map')} && "
        f"{spec}.nodeSelector.all(k, {_is(f'{spec}.nodeSelector[k]', 'string')}))) && "
        f"has({spec}.containers) && {_is(f'{spec}.containers', 'list')} && "
        f"size({spec}.containers) > 0 && {spec}.containers.all(c, {_plain_resources('c')}) && "
        f"(!has({spec}.initContainers) || ({_is(f'{spec}.initContainers', 'list')} && "
        f"{spec}.initContainers.all(c, {_plain_resources('c')}))) && "
        f"{_plain_resources(spec)}"
    )


def not_a_create_the_crd_rules_judge() -> dict[str, str]:
    """Pure: the match condition that lets a plain ``v1beta2`` Workload create skip the webhook.

    The Workload CRD's CEL rules (docs/validation.md#rules-enforced-by-the-api-server)
    judge everything of such a create but its pod templates and its annotations, and the
    API server drops the status of a create.  A create whose templates hold only
    containers with ordinary, non-negative requests and limits (no reserved ``pods``), no
    template labels or annotations, and whose object carries none of the annotations the
    webhook reads nor a field it warns about (``preemptionGates``), cannot break a rule
    the webhook would apply and needs no warning from it, so the API server is
    spared a round trip per create: Workloads are created in bursts (a job controller, a
    benchmark), and a round trip each is what made those bursts wait on the webhook.
    Anything else, a legacy version's create included, is still sent to kuota.  The type
    guards keep a malformed object from failing the condition: it goes to the webhook.
    """
    annotations = "object.metadata.annotations"
    listed = ", ".join(f"'{key}'" for key in _WEBHOOK_ANNOTATIONS)
    pod_sets = "object.spec.podSets"
    # A field kuota does not act on is answered with a warning (not_acted_on.py): a create
    # that sets one still goes to the webhook, which gives it.
    gates = "object.spec.preemptionGates"
    plain = (
        f"(!has({annotations}) || !{annotations}.exists(k, k in [{listed}])) && "
        f"has(object.spec) && {_is('object.spec', 'map')} && "
        f"(!has({gates}) || ({_is(gates, 'list')} && size({gates}) == 0)) && has({pod_sets}) && "
        f"{_is(pod_sets, 'list')} && {pod_sets}.all(p, {_plain_pod_set('p')})"
    )
    return {
        "name": "not-a-create-the-crd-rules-judge",
        "expression": "!(!has(request.subResource) && request.operation == 'CREATE' && "
        f"request.kind.version == 'v1beta2' && {plain})",
    }
