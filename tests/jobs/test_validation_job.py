"""batch/v1 Job rules of the validating webhook (docs/validation.md#jobs)."""

from __future__ import annotations

import pytest

from scheduler.jobs.batchjob import validate_job
from tests.api import validation_builders as b
from tests.api.validation_builders import bad, good

QN = "kueue.x-k8s.io/queue-name"
PRIO = "kueue.x-k8s.io/priority-class"
MAX = "kueue.x-k8s.io/max-exec-time-seconds"
MINP = "kueue.x-k8s.io/job-min-parallelism"
EQ = "kueue.x-k8s.io/job-completions-equal-parallelism"
PRE = "kueue.x-k8s.io/prebuilt-workload-name"
ELASTIC = "kueue.x-k8s.io/elastic-job"
GATED = "kueue.x-k8s.io/admission-gated-by"
RUNNING = {"suspend": False}

FAILING = [
    bad(
        "JOB-1",
        b.job(queue="Team_A"),
        f"metadata.labels[{QN}]",
        '"Team_A" is not a valid LocalQueue name',
    ),
    bad(
        "JOB-2",
        b.job(annotations={QN: "Team_A"}),
        f"metadata.annotations[{QN}]",
        '"Team_A" is not a valid LocalQueue name',
    ),
    bad(
        "JOB-3",
        b.job(labels={MAX: "1h"}),
        f"metadata.labels[{MAX}]",
        '"1h" is not an integer number of seconds',
    ),
    bad("JOB-4", b.job(labels={MAX: "0"}), f"metadata.labels[{MAX}]", "must be greater than 0"),
    bad(
        "JOB-5",
        b.job(annotations={MINP: "two"}, parallelism=4),
        f"metadata.annotations[{MINP}]",
        '"two" is not an integer',
    ),
    bad(
        "JOB-6",
        b.job(annotations={MINP: "5"}, parallelism=4),
        f"metadata.annotations[{MINP}]",
        "must be between 1 and 3 (the job runs 4 pods)",
    ),
    bad(
        "JOB-6",
        b.job(annotations={MINP: "0"}, parallelism=4, completions=2),
        f"metadata.annotations[{MINP}]",
        "between 1 and 1 (the job runs 2 pods)",
    ),
    bad(
        "JOB-7",
        b.job(annotations={MINP: "2", ELASTIC: "true"}, parallelism=4),
        f"metadata.annotations[{MINP}]",
        "partial admission and elastic jobs cannot be combined",
    ),
    bad(
        "JOB-8",
        b.job(annotations={EQ: "yes"}),
        f"metadata.annotations[{EQ}]",
        '"yes" is not true or false',
    ),
    bad(
        "JOB-9",
        b.job(annotations={EQ: "true"}),
        f"metadata.annotations[{EQ}]",
        "may only be enabled for Indexed jobs",
    ),
    bad(
        "JOB-10",
        b.job(annotations={EQ: "true"}, completionMode="Indexed", parallelism=2, completions=3),
        "spec.completions",
        f"must equal parallelism (2) when {EQ} is true",
    ),
    bad(
        "JOB-11",
        b.job(labels={PRE: "Bad_WL"}),
        f"metadata.labels[{PRE}]",
        '"Bad_WL" is not a valid Workload name',
    ),
    bad(
        "JOB-11",
        b.job(annotations={PRE: "Bad_WL"}),
        f"metadata.annotations[{PRE}]",
        '"Bad_WL" is not a valid',
    ),
    bad(
        "JOB-12",
        b.job(annotations={GATED: "nodomain"}),
        f"metadata.annotations[{GATED}]",
        '"nodomain" must look like example.com/name',
    ),
    bad(
        "JOB-U1",
        b.job(queue="b", **RUNNING),
        f"metadata.labels[{QN}]",
        "cannot change while the job is running (not suspended)",
        old=b.job(queue="a", **RUNNING),
    ),
    bad(
        "JOB-U1",
        b.job(queue="a", **RUNNING),
        f"metadata.labels[{QN}]",
        "suspend the job first",
        old=b.job(annotations={QN: "b"}, **RUNNING),
    ),
    bad(
        "JOB-U2",
        b.job(),
        f"metadata.labels[{QN}]",
        'must not be removed in a namespace with a "default" LocalQueue',
        old=b.job(queue="a"),
        namespace_has_default_queue=True,
    ),
    bad(
        "JOB-U3",
        b.job(labels={PRIO: "high"}, **RUNNING),
        f"metadata.labels[{PRIO}]",
        "a WorkloadPriorityClass cannot be added to a running (not suspended) job",
        old=b.job(**RUNNING),
    ),
    bad(
        "JOB-U4",
        b.job(),
        f"metadata.labels[{PRIO}]",
        "a WorkloadPriorityClass cannot be removed from a job",
        old=b.job(labels={PRIO: "high"}),
    ),
    bad(
        "JOB-U5",
        b.job(labels={MAX: "60"}),
        f"metadata.labels[{MAX}]",
        "cannot change unless the job stays suspended",
        old=b.job(labels={MAX: "30"}, **RUNNING),
    ),
    bad(
        "JOB-U6",
        b.job(labels={PRE: "wl-b"}, **RUNNING),
        f"metadata.labels[{PRE}]",
        "cannot change while the job is running",
        old=b.job(labels={PRE: "wl-a"}, **RUNNING),
    ),
    bad(
        "JOB-U7",
        b.job(annotations={MINP: "1"}, parallelism=3, suspend=False),
        "spec.parallelism",
        "cannot change while the job runs with partial admission",
        old=b.job(annotations={MINP: "1"}, parallelism=4, suspend=False),
    ),
    bad(
        "JOB-U8",
        b.job(annotations={EQ: "true"}, completionMode="Indexed", **RUNNING),
        f"metadata.annotations[{EQ}]",
        "cannot change while the job is not suspended",
        old=b.job(completionMode="Indexed", **RUNNING),
    ),
    bad(
        "JOB-U9",
        b.job(annotations={MINP: "9"}, parallelism=4),
        f"metadata.annotations[{MINP}]",
        "must be between 1 and 3",
        old=b.job(annotations={MINP: "2"}, parallelism=4),
        rule_hint="JOB-6",
    ),
    bad(
        "JOB-U10",
        b.job(annotations={ELASTIC: "true"}),
        f"metadata.annotations[{ELASTIC}]",
        'is immutable; it was ""',
        old=b.job(),
    ),
    bad(
        "JOB-U11",
        b.job(annotations={GATED: "example.com/a,example.com/b"}),
        f"metadata.annotations[{GATED}]",
        "gates can only be removed, not added",
        old=b.job(annotations={GATED: "example.com/a"}),
    ),
]

PASSING = [
    good("JOB-1", b.job(queue="user-queue")),
    good("JOB-2", b.job(annotations={QN: "training"}), note="legacy annotation"),
    good("JOB-3", b.job(labels={MAX: "3600"})),
    good("JOB-4", b.job(labels={MAX: "1"})),
    good("JOB-5", b.job(annotations={MINP: "1"}, parallelism=2)),
    good("JOB-6", b.job(annotations={MINP: "3"}, parallelism=4)),
    good("JOB-7", b.job(annotations={ELASTIC: "true"})),
    good("JOB-8", b.job(annotations={EQ: "false"})),
    good(
        "JOB-9",
        b.job(annotations={EQ: "True"}, completionMode="Indexed", parallelism=3, completions=3),
    ),
    good("JOB-10", b.job(annotations={EQ: "true"}, completionMode="Indexed")),
    good("JOB-11", b.job(labels={PRE: "prebuilt-wl"})),
    good("JOB-12", b.job(annotations={GATED: "example.com/gate"})),
    good("JOB-U1", b.job(queue="b"), old=b.job(queue="a"), note="V19 suspended queue change"),
    good("JOB-U2", b.job(), old=b.job(queue="a"), note="no default LocalQueue"),
    good(
        "JOB-U3",
        b.job(labels={PRIO: "low"}, **RUNNING),
        old=b.job(labels={PRIO: "high"}, **RUNNING),
        note="V19 value change",
    ),
    good("JOB-U4", b.job(labels={PRIO: "high"}), old=b.job()),
    good("JOB-U5", b.job(labels={MAX: "60"}), old=b.job(labels={MAX: "30"})),
    good("JOB-U6", b.job(labels={PRE: "wl-b"}), old=b.job(labels={PRE: "wl-a"})),
    good(
        "JOB-U7",
        b.job(annotations={MINP: "1"}, parallelism=3),
        old=b.job(annotations={MINP: "1"}, parallelism=4),
    ),
    good(
        "JOB-U8",
        b.job(annotations={EQ: "true"}, completionMode="Indexed"),
        old=b.job(completionMode="Indexed"),
    ),
    good(
        "JOB-U9",
        b.job(annotations={MINP: "5"}, parallelism=5),
        old=b.job(annotations={MINP: "5"}, parallelism=6),
        note="unchanged annotation not re-checked",
    ),
    good(
        "JOB-U10",
        b.job(annotations={ELASTIC: "true"}, **RUNNING),
        old=b.job(annotations={ELASTIC: "true"}),
    ),
    good(
        "JOB-U11",
        b.job(annotations={GATED: "example.com/a"}),
        old=b.job(annotations={GATED: "example.com/a,example.com/b"}),
    ),
    good("JOB-1", b.job(queue="a", suspend=False), note="V20 created running with a queue"),
]


@pytest.mark.parametrize("case", FAILING, ids=lambda case: case.id)
def test_failing_case(case: b.Bad) -> None:
    options = dict(case.options)
    rule = options.pop("rule_hint", case.rule)
    errors = validate_job(case.new, case.old, **options)
    b.find(errors, case.path, *case.words, rule=rule)


@pytest.mark.parametrize("case", PASSING, ids=lambda case: case.id)
def test_passing_case(case: b.Good) -> None:
    b.check_good(validate_job, case)


def test_job_schema_fields_are_not_kuotas_business() -> None:
    job = b.job(queue="a", backoffLimit=3, podFailurePolicy={"rules": []})
    job["status"] = {"active": 1}
    assert validate_job(job) == []


def test_generate_name_stands_in_for_name() -> None:
    job = b.job(queue="training")
    del job["metadata"]["name"]
    job["metadata"]["generateName"] = "sample-job-"
    assert validate_job(job) == []
    del job["metadata"]["generateName"]
    b.find(validate_job(job), "metadata.name", "required")


# --- JOB-K2: the quota fields of a running Job kuota manages -------------------------

MANAGED = {"managed": True}


def running(**spec: object) -> dict[str, object]:
    return b.job(queue="team-a", suspend=False, **spec)


ADMITTED_QUOTA_FAILING = [
    bad(
        "JOB-K2",
        running(parallelism=4),
        "spec.parallelism",
        "cannot change while the job is admitted by kuota",
        "its quota was reserved for 2 pods",
        "suspend it in the same update (spec.suspend: true)",
        old=running(parallelism=2),
        **MANAGED,
    ),
    bad(
        "JOB-K2",
        running(parallelism=1),
        "spec.parallelism",
        "reserved for 3 pods",
        old=running(parallelism=3),
        note="shrinking is refused too: kuota would keep reserving 3 pods",
        **MANAGED,
    ),
    bad(
        "JOB-K2",
        running(completionMode="Indexed", parallelism=5, completions=5),
        "spec.completions",
        "reserved for 3 pods",
        old=running(completionMode="Indexed", parallelism=3, completions=3),
        note="an elastic Indexed Job: completions move with parallelism",
        **MANAGED,
    ),
    bad(
        "JOB-K2",
        running(parallelism=4, completions=1),
        "spec.parallelism",
        "reserved for 1 pod)",
        old=running(parallelism=2, completions=1),
        note="the pod count is min(parallelism, completions)",
        **MANAGED,
    ),
]


@pytest.mark.parametrize("case", ADMITTED_QUOTA_FAILING, ids=lambda case: case.id)
def test_admitted_quota_failing_case(case: b.Bad) -> None:
    options = {key: value for key, value in case.options.items() if key != "note"}
    found = b.find(validate_job(case.new, case.old, **options), case.path, *case.words)
    assert (found.rule, found.origin) == ("JOB-K2", "K")


ADMITTED_QUOTA_PASSING = [
    good(
        "JOB-K2",
        b.job(queue="team-a", parallelism=4),
        old=b.job(queue="team-a", parallelism=2),
        note="a suspended (pending) Job may still change",
        **MANAGED,
    ),
    good(
        "JOB-K2",
        b.job(queue="team-a", parallelism=4),
        old=running(parallelism=2),
        note="suspending in the same update gives the reservation back",
        **MANAGED,
    ),
    good(
        "JOB-K2",
        running(parallelism=4),
        old=running(parallelism=2),
        note="kuota's scheduler may (it sets the admitted count)",
        managed=True,
        by_scheduler=True,
    ),
    good(
        "JOB-K2",
        running(parallelism=4),
        old=running(parallelism=2),
        note="a Job kuota does not manage is not kuota's business",
    ),
    good(
        "JOB-K2",
        running(parallelism=2, backoffLimit=3),
        old=running(parallelism=2, backoffLimit=6),
        note="fields the quota does not depend on",
        **MANAGED,
    ),
]


@pytest.mark.parametrize("case", ADMITTED_QUOTA_PASSING, ids=lambda case: case.id)
def test_admitted_quota_passing_case(case: b.Good) -> None:
    b.check_good(validate_job, case)


def test_a_finished_job_holds_no_quota_to_guard() -> None:
    old = running(parallelism=2)
    old["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    assert validate_job(running(parallelism=4), old, managed=True) == []


def test_partial_admission_keeps_its_own_message_for_parallelism() -> None:
    old = b.job(queue="team-a", suspend=False, annotations={MINP: "1"}, parallelism=4)
    new = b.job(queue="team-a", suspend=False, annotations={MINP: "1"}, parallelism=3)
    errors = validate_job(new, old, managed=True)
    assert [(item.rule, item.field) for item in errors] == [("JOB-U7", "spec.parallelism")]
