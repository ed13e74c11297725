"""The claim behind the Workload webhook's second match condition, checked on the rules.

``webhook.workload_writes.not_a_status_write_the_rules_pass_as_is`` lets a
``v1beta2`` status write skip the webhook when it keeps every field in
``JUDGED_STATUS_FIELDS``, keeps whether QuotaReserved is True, and carries only
valid conditions.  That is safe only if the rules themselves agree: whatever
else such a write changes, ``validate_workload_status`` finds nothing wrong with
it when the old object was valid.  ``would_skip`` below restates the CEL
expression in Python (the e2e test in ``e2e/test_webhook_scope.py`` runs the CEL
itself on a real API server); the property fails if a rule starts reading a
status field that is not listed, or if the condition checks drift apart.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.validation import validate_workload_status
from scheduler.api.validation.workload import validate_workload
from scheduler.api.validation.workload_status import (
    CONDITION_STATUSES,
    JUDGED_STATUS_FIELDS,
    MAX_CONDITIONS,
    MAX_MESSAGE_CHARACTERS,
    MAX_REASON_CHARACTERS,
    REASON_PATTERN,
    REQUIRED_CONDITION_FIELDS,
)
from tests.builders import pod_set, workload

WHEN = "2025-01-01T00:00:00Z"  # every condition's time

_REASON = re.compile(f"^{REASON_PATTERN}$")


def _reserved(obj: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "QuotaReserved" and c.get("status") == "True"
        for c in obj.get("status", {}).get("conditions", [])
    )


def _valid_condition(c: dict[str, Any]) -> bool:
    return (
        all(c.get(field) not in (None, "") for field in REQUIRED_CONDITION_FIELDS)
        and c["status"] in CONDITION_STATUSES
        and len(c["reason"]) <= MAX_REASON_CHARACTERS
        and _REASON.match(c["reason"]) is not None
        and len(c.get("message", "")) <= MAX_MESSAGE_CHARACTERS
        and c.get("observedGeneration", 0) >= 0
    )


def would_skip(new: dict[str, Any], old: dict[str, Any]) -> bool:
    status, old_status = new.get("status", {}), old.get("status", {})
    conditions = status.get("conditions", [])
    return (
        all(status.get(field) == old_status.get(field) for field in JUDGED_STATUS_FIELDS)
        and _reserved(new) == _reserved(old)
        and len(conditions) <= MAX_CONDITIONS
        and all(_valid_condition(c) for c in conditions)
    )


POD_SETS = [
    [pod_set("main", 2, cpu="1")],
    [pod_set("driver", 1, cpu="1"), pod_set("workers", 4, cpu="1")],
]

valid_conditions = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["Finished", "PodsReady", "QuotaReserved", "Admitted"]),
        "status": st.sampled_from(CONDITION_STATUSES),
        "reason": st.sampled_from(["Finished", "ByTest", "a,b:c_d"]),
        "lastTransitionTime": st.just("2026-11-26T10:00:00Z"),
    },
    optional={"message": st.just("done"), "observedGeneration": st.integers(0, 3)},
)
texts = st.sampled_from(["", "x", "Finished", "ByTest", "1bad", "a,b:c_d", "has space", "é"])
any_conditions = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["Finished", "PodsReady", "QuotaReserved", "Admitted", ""]),
        "status": st.sampled_from(["True", "False", "Unknown"]),
        "reason": texts | st.just("R" * (MAX_REASON_CHARACTERS + 1)),
        "message": texts | st.just("m" * (MAX_MESSAGE_CHARACTERS + 1)),
        "lastTransitionTime": st.sampled_from(["", "2026-11-26T10:00:00Z"]),
        "observedGeneration": st.integers(min_value=-2, max_value=3),
    },
)


# For each judged field, values some rule rejects in some old state.
JUDGED_VALUES: dict[str, list[Any]] = {
    "admission": [{"clusterQueue": "other", "podSetAssignments": []}],
    "reclaimablePods": [[], [{"name": "nope", "count": 1}], [{"name": "main", "count": 9}]],
    "admissionChecks": [[{"name": "check", "state": "Pending", "podSetUpdates": [{"name": "x"}]}]],
    "clusterName": ["worker-2"],
    "nominatedClusterNames": [["worker-1", "worker-2"]],
}


@st.composite
def broken_conditions(draw: st.DrawFn) -> dict[str, Any]:
    """A valid condition with one thing WL-35 rejects."""
    condition = dict(draw(valid_conditions))
    field, value = draw(
        st.sampled_from(
            [
                ("reason", "1bad"),
                ("reason", "has space"),
                ("reason", "R" * (MAX_REASON_CHARACTERS + 1)),
                ("message", "m" * (MAX_MESSAGE_CHARACTERS + 1)),
                ("observedGeneration", -1),
                *((name, None) for name in REQUIRED_CONDITION_FIELDS),
                *((name, "") for name in REQUIRED_CONDITION_FIELDS),
            ]
        )
    )
    if value is None:
        del condition[field]
    else:
        condition[field] = value
    return condition


@st.composite
def old_workloads(draw: st.DrawFn) -> dict[str, Any]:
    obj = workload().as_written().queue("lq").pod_sets(*draw(st.sampled_from(POD_SETS)))
    if draw(st.booleans()):
        obj.reserve_quota("cq", flavor="alpha", at=WHEN, message="")
        if draw(st.booleans()):
            obj.admitted(at=WHEN)
        names = [p["name"] for p in obj.pod_sets_raw]
        if draw(st.booleans()):
            obj.status(reclaimablePods=[{"name": names[-1], "count": 1}])
        if draw(st.booleans()):
            obj.admission_check("check", "Ready", lastTransitionTime="2026-11-26T10:00:00Z")
    if draw(st.booleans()):
        obj.status(clusterName="worker-1")
    return obj.build()


@st.composite
def status_writes(draw: st.DrawFn, old: dict[str, Any]) -> dict[str, Any]:
    """Any status write: conditions, requeueState, counters, and sometimes a judged field."""
    new = copy.deepcopy(old)
    status = new.setdefault("status", {})
    kept = [c for c in status.get("conditions", []) if draw(st.booleans())]
    drawn = draw(st.lists(valid_conditions | broken_conditions() | any_conditions, max_size=3))
    added = {c.get("type"): c for c in drawn}
    by_type = {c["type"]: c for c in kept}
    by_type.update(added)
    status["conditions"] = list(by_type.values())
    if draw(st.booleans()):
        status["requeueState"] = {"count": draw(st.integers(0, 5))}
    if draw(st.booleans()):
        status["accumulatedPastExecutionTimeSeconds"] = draw(st.integers(0, 100))
    if draw(st.booleans()):
        field = draw(st.sampled_from(sorted(JUDGED_VALUES)))
        value = draw(st.sampled_from([None, *JUDGED_VALUES[field]]))
        if value is None:
            status.pop(field, None)
        else:
            status[field] = copy.deepcopy(value)
    return new


@settings(max_examples=600, deadline=None)
@given(data=st.data())
def test_a_write_the_match_condition_lets_through_breaks_no_status_rule(
    data: st.DataObject,
) -> None:
    old = data.draw(old_workloads())
    assert validate_workload(old) == [], "the builders make valid Workloads"
    new = data.draw(status_writes(old))
    if would_skip(new, old):
        assert validate_workload_status(new, old) == []


def test_the_writes_of_kueues_tools_are_let_through() -> None:
    """The ``Finished`` condition Kueue's job reconcilers and benchmark runner set."""
    old = (
        workload()
        .as_written()
        .queue("lq")
        .pod_set(None, None, cpu="1")
        .reserve_quota("cq", flavor="alpha", at=WHEN, message="")
        .admitted(at=WHEN)
        .build()
    )
    new = copy.deepcopy(old)
    new["status"]["conditions"].append(
        {
            "type": "Finished",
            "status": "True",
            "reason": "ByTest",
            "message": "By test runner",
            "lastTransitionTime": "2026-11-26T10:00:00Z",
            "observedGeneration": 1,
        }
    )
    assert would_skip(new, old)
    evicted = copy.deepcopy(old)
    del evicted["status"]["admission"]
    assert not would_skip(evicted, old), "releasing the quota is judged"
