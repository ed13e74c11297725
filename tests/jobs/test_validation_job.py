"""batch/v1 Job rules of the validating webhook (docs/validation.md#jobs)."""

from __future__ import annotations

import pytest

from scheduler.jobs.batchjob import validate_job
from tests.api.cases import Bad, Good, bad, check_good, find, good
from tests.builders import container, job

QN = "kueue.x-k8s.io/queue-name"
PRIO = "kueue.x-k8s.io/priority-class"
MAX = "kueue.x-k8s.io/max-exec-time-seconds"
MINP = "kueue.x-k8s.io/job-min-parallelism"
EQ = "kueue.x-k8s.io/job-completions-equal-parallelism"
PRE = "kueue.x-k8s.io/prebuilt-workload-name"
ELASTIC = "kueue.x-k8s.io/elastic-job"
GATED = "kueue.x-k8s.io/admission-gated-by"
RUNNING = {"suspend": False}


def user_job() -> job:
    """A Job as a user writes it: suspended, no parallelism or completions, one container
    without resources (and an empty label map)."""
    return job().labels().parallelism(None).completions(None).containers(container())


FAILING = [
    bad(
        "JOB-1",
        user_job().queue("Team_A"),
        f"metadata.labels[{QN}]",
        '"Team_A" is not a valid LocalQueue name',
    ),
    bad(
        "JOB-2",
        user_job().annotations({QN: "Team_A"}),
        f"metadata.annotations[{QN}]",
        '"Team_A" is not a valid LocalQueue name',
    ),
    bad(
        "JOB-3",
        user_job().labels({MAX: "1h"}),
        f"metadata.labels[{MAX}]",
        '"1h" is not an integer number of seconds',
    ),
    bad(
        "JOB-4", user_job().labels({MAX: "0"}), f"metadata.labels[{MAX}]", "must be greater than 0"
    ),
    bad(
        "JOB-5",
        user_job().parallelism(4).annotations({MINP: "two"}),
        f"metadata.annotations[{MINP}]",
        '"two" is not an integer',
    ),
    bad(
        "JOB-6",
        user_job().parallelism(4).annotations({MINP: "5"}),
        f"metadata.annotations[{MINP}]",
        "must be between 1 and 3 (the job runs 4 pods)",
    ),
    bad(
        "JOB-6",
        user_job().parallelism(4).completions(2).annotations({MINP: "0"}),
        f"metadata.annotations[{MINP}]",
        "between 1 and 1 (the job runs 2 pods)",
    ),
    bad(
        "JOB-7",
        user_job().parallelism(4).annotations({MINP: "2", ELASTIC: "true"}),
        f"metadata.annotations[{MINP}]",
        "partial admission and elastic jobs cannot be combined",
    ),
    bad(
        "JOB-8",
        user_job().annotations({EQ: "yes"}),
        f"metadata.annotations[{EQ}]",
        '"yes" is not true or false',
    ),
    bad(
        "JOB-9",
        user_job().annotations({EQ: "true"}),
        f"metadata.annotations[{EQ}]",
        "may only be enabled for Indexed jobs",
    ),
    bad(
        "JOB-10",
        user_job()
        .parallelism(2)
        .completions(3)
        .annotations({EQ: "true"})
        .spec(completionMode="Indexed"),
        "spec.completions",
        f"must equal parallelism (2) when {EQ} is true",
    ),
    bad(
        "JOB-11",
        user_job().labels({PRE: "Bad_WL"}),
        f"metadata.labels[{PRE}]",
        '"Bad_WL" is not a valid Workload name',
    ),
    bad(
        "JOB-11",
        user_job().annotations({PRE: "Bad_WL"}),
        f"metadata.annotations[{PRE}]",
        '"Bad_WL" is not a valid',
    ),
    bad(
        "JOB-12",
        user_job().annotations({GATED: "nodomain"}),
        f"metadata.annotations[{GATED}]",
        '"nodomain" must look like example.com/name',
    ),
    bad(
        "JOB-U1",
        user_job().queue("b").spec(**RUNNING),
        f"metadata.labels[{QN}]",
        "cannot change while the job is running (not suspended)",
        old=user_job().queue("a").spec(**RUNNING),
    ),
    bad(
        "JOB-U1",
        user_job().queue("a").spec(**RUNNING),
        f"metadata.labels[{QN}]",
        "suspend the job first",
        old=user_job().annotations({QN: "b"}).spec(**RUNNING),
    ),
    bad(
        "JOB-U2",
        user_job(),
        f"metadata.labels[{QN}]",
        'must not be removed in a namespace with a "default" LocalQueue',
        old=user_job().queue("a"),
        namespace_has_default_queue=True,
    ),
    bad(
        "JOB-U3",
        user_job().labels({PRIO: "high"}).spec(**RUNNING),
        f"metadata.labels[{PRIO}]",
        "a WorkloadPriorityClass cannot be added to a running (not suspended) job",
        old=user_job().spec(**RUNNING),
    ),
    bad(
        "JOB-U4",
        user_job(),
        f"metadata.labels[{PRIO}]",
        "a WorkloadPriorityClass cannot be removed from a job",
        old=user_job().labels({PRIO: "high"}),
    ),
    bad(
        "JOB-U4",
        user_job().labels({PRIO: ""}).spec(**RUNNING),
        f"metadata.labels[{PRIO}]",
        "a WorkloadPriorityClass cannot be removed from a job",
        old=user_job().labels({PRIO: "high"}).spec(**RUNNING),
    ),
    bad(
        "JOB-U5",
        user_job().labels({MAX: "60"}),
        f"metadata.labels[{MAX}]",
        "cannot change unless the job stays suspended",
        old=user_job().labels({MAX: "30"}).spec(**RUNNING),
    ),
    bad(
        "JOB-U6",
        user_job().labels({PRE: "wl-b"}).spec(**RUNNING),
        f"metadata.labels[{PRE}]",
        "cannot change while the job is running",
        old=user_job().labels({PRE: "wl-a"}).spec(**RUNNING),
    ),
    bad(
        "JOB-U7",
        user_job().parallelism(3).suspend(False).annotations({MINP: "1"}),
        "spec.parallelism",
        "cannot change while the job runs with partial admission",
        old=user_job().parallelism(4).suspend(False).annotations({MINP: "1"}),
    ),
    bad(
        "JOB-U8",
        user_job().annotations({EQ: "true"}).spec(completionMode="Indexed", **RUNNING),
        f"metadata.annotations[{EQ}]",
        "cannot change while the job is not suspended",
        old=user_job().spec(completionMode="Indexed", **RUNNING),
    ),
    bad(
        "JOB-U9",
        user_job().parallelism(4).annotations({MINP: "9"}),
        f"metadata.annotations[{MINP}]",
        "must be between 1 and 3",
        old=user_job().parallelism(4).annotations({MINP: "2"}),
        rule_hint="JOB-6",
    ),
    bad(
        "JOB-U10",
        user_job().annotations({ELASTIC: "true"}),
        f"metadata.annotations[{ELASTIC}]",
        'is immutable; it was ""',
        old=user_job(),
    ),
    bad(
        "JOB-U11",
        user_job().annotations({GATED: "example.com/a,example.com/b"}),
        f"metadata.annotations[{GATED}]",
        "gates can only be removed, not added",
        old=user_job().annotations({GATED: "example.com/a"}),
    ),
]

PASSING = [
    good("JOB-1", user_job().queue("user-queue")),
    good("JOB-2", user_job().annotations({QN: "training"}), note="legacy annotation"),
    good("JOB-3", user_job().labels({MAX: "3600"})),
    good("JOB-4", user_job().labels({MAX: "1"})),
    good("JOB-5", user_job().parallelism(2).annotations({MINP: "1"})),
    good("JOB-6", user_job().parallelism(4).annotations({MINP: "3"})),
    good("JOB-7", user_job().annotations({ELASTIC: "true"})),
    good("JOB-8", user_job().annotations({EQ: "false"})),
    good(
        "JOB-9",
        user_job()
        .parallelism(3)
        .completions(3)
        .annotations({EQ: "True"})
        .spec(completionMode="Indexed"),
    ),
    good("JOB-10", user_job().annotations({EQ: "true"}).spec(completionMode="Indexed")),
    good("JOB-11", user_job().labels({PRE: "prebuilt-wl"})),
    good("JOB-12", user_job().annotations({GATED: "example.com/gate"})),
    good(
        "JOB-U1",
        user_job().queue("b"),
        old=user_job().queue("a"),
        note="V19 suspended queue change",
    ),
    good("JOB-U2", user_job(), old=user_job().queue("a"), note="no default LocalQueue"),
    good(
        "JOB-U3",
        user_job().labels({PRIO: "low"}).spec(**RUNNING),
        old=user_job().labels({PRIO: "high"}).spec(**RUNNING),
        note="V19 value change",
    ),
    good("JOB-U4", user_job().labels({PRIO: "high"}), old=user_job()),
    good(
        "JOB-U3",
        user_job().labels({PRIO: ""}).spec(**RUNNING),
        old=user_job().spec(**RUNNING),
        note="empty: none",
    ),
    good("JOB-U5", user_job().labels({MAX: "60"}), old=user_job().labels({MAX: "30"})),
    good("JOB-U6", user_job().labels({PRE: "wl-b"}), old=user_job().labels({PRE: "wl-a"})),
    good(
        "JOB-U7",
        user_job().parallelism(3).annotations({MINP: "1"}),
        old=user_job().parallelism(4).annotations({MINP: "1"}),
    ),
    good(
        "JOB-U8",
        user_job().annotations({EQ: "true"}).spec(completionMode="Indexed"),
        old=user_job().spec(completionMode="Indexed"),
    ),
    good(
        "JOB-U9",
        user_job().parallelism(5).annotations({MINP: "5"}),
        old=user_job().parallelism(6).annotations({MINP: "5"}),
        note="unchanged annotation not re-checked",
    ),
    good(
        "JOB-U10",
        user_job().annotations({ELASTIC: "true"}).spec(**RUNNING),
        old=user_job().annotations({ELASTIC: "true"}),
    ),
    good(
        "JOB-U11",
        user_job().annotations({GATED: "example.com/a"}),
        old=user_job().annotations({GATED: "example.com/a,example.com/b"}),
    ),
    good("JOB-1", user_job().queue("a").suspend(False), note="V20 created running with a queue"),
]


@pytest.mark.parametrize("case", FAILING, ids=lambda case: case.id)
def test_failing_case(case: Bad) -> None:
    options = dict(case.options)
    rule = options.pop("rule_hint", case.rule)
    errors = validate_job(case.new, case.old, **options)
    find(errors, case.path, *case.words, rule=rule)


@pytest.mark.parametrize("case", PASSING, ids=lambda case: case.id)
def test_passing_case(case: Good) -> None:
    check_good(validate_job, case)


def test_job_schema_fields_are_not_kuotas_business() -> None:
    job = user_job().queue("a").spec(backoffLimit=3, podFailurePolicy={"rules": []}).build()
    job["status"] = {"active": 1}
    assert validate_job(job) == []


def test_generate_name_stands_in_for_name() -> None:
    job = user_job().queue("training").build()
    del job["metadata"]["name"]
    job["metadata"]["generateName"] = "sample-job-"
    assert validate_job(job) == []
    del job["metadata"]["generateName"]
    find(validate_job(job), "metadata.name", "required")


# --- JOB-K2: the quota fields of a running Job kuota manages -------------------------

MANAGED = {"managed": True}


def running() -> job:
    """A Job of queue ``team-a`` that kuota admitted: no longer suspended."""
    return user_job().queue("team-a").suspend(False)


ADMITTED_QUOTA_FAILING = [
    bad(
        "JOB-K2",
        running().parallelism(4),
        "spec.parallelism",
        "cannot change while the job is admitted by kuota",
        "its quota was reserved for 2 pods",
        "suspend it in the same update (spec.suspend: true)",
        old=running().parallelism(2),
        **MANAGED,
    ),
    bad(
        "JOB-K2",
        running().parallelism(1),
        "spec.parallelism",
        "reserved for 3 pods",
        old=running().parallelism(3),
        note="shrinking is refused too: kuota would keep reserving 3 pods",
        **MANAGED,
    ),
    bad(
        "JOB-K2",
        running().parallelism(5).completions(5).spec(completionMode="Indexed"),
        "spec.completions",
        "reserved for 3 pods",
        old=running().parallelism(3).completions(3).spec(completionMode="Indexed"),
        note="an elastic Indexed Job: completions move with parallelism",
        **MANAGED,
    ),
    bad(
        "JOB-K2",
        running().parallelism(4).completions(1),
        "spec.parallelism",
        "reserved for 1 pod)",
        old=running().parallelism(2).completions(1),
        note="the pod count is min(parallelism, completions)",
        **MANAGED,
    ),
]


@pytest.mark.parametrize("case", ADMITTED_QUOTA_FAILING, ids=lambda case: case.id)
def test_admitted_quota_failing_case(case: Bad) -> None:
    options = {key: value for key, value in case.options.items() if key != "note"}
    found = find(validate_job(case.new, case.old, **options), case.path, *case.words)
    assert (found.rule, found.origin) == ("JOB-K2", "K")


ADMITTED_QUOTA_PASSING = [
    good(
        "JOB-K2",
        user_job().parallelism(4).queue("team-a"),
        old=user_job().parallelism(2).queue("team-a"),
        note="a suspended (pending) Job may still change",
        **MANAGED,
    ),
    good(
        "JOB-K2",
        user_job().parallelism(4).queue("team-a"),
        old=running().parallelism(2),
        note="suspending in the same update gives the reservation back",
        **MANAGED,
    ),
    good(
        "JOB-K2",
        running().parallelism(4),
        old=running().parallelism(2),
        note="kuota's scheduler may (it sets the admitted count)",
        managed=True,
        by_scheduler=True,
    ),
    good(
        "JOB-K2",
        running().parallelism(4),
        old=running().parallelism(2),
        note="a Job kuota does not manage is not kuota's business",
    ),
    good(
        "JOB-K2",
        running().parallelism(2).spec(backoffLimit=3),
        old=running().parallelism(2).spec(backoffLimit=6),
        note="fields the quota does not depend on",
        **MANAGED,
    ),
]


@pytest.mark.parametrize("case", ADMITTED_QUOTA_PASSING, ids=lambda case: case.id)
def test_admitted_quota_passing_case(case: Good) -> None:
    check_good(validate_job, case)


def test_a_finished_job_holds_no_quota_to_guard() -> None:
    old = running().parallelism(2).status(conditions=[{"type": "Complete", "status": "True"}])
    assert validate_job(running().parallelism(4).build(), old.build(), managed=True) == []


def test_partial_admission_keeps_its_own_message_for_parallelism() -> None:
    old = user_job().parallelism(4).queue("team-a").suspend(False).annotations({MINP: "1"}).build()
    new = user_job().parallelism(3).queue("team-a").suspend(False).annotations({MINP: "1"}).build()
    errors = validate_job(new, old, managed=True)
    assert [(item.rule, item.field) for item in errors] == [("JOB-U7", "spec.parallelism")]


# --- elastic Jobs: JOB-K3, JOB-13, and JOB-7 with the gate ---------------------------


def running_elastic() -> job:
    return running().annotations({ELASTIC: "true"})


def test_a_running_elastic_job_may_scale_down_and_up() -> None:
    old = running_elastic().parallelism(4).build()
    assert validate_job(running_elastic().parallelism(2).build(), old, managed=True) == []
    assert validate_job(running_elastic().parallelism(6).build(), old, managed=True) == []


def test_an_elastic_job_dispatched_by_multikueue_keeps_its_size() -> None:
    old = running_elastic().parallelism(4).spec(managedBy="kueue.x-k8s.io/multikueue").build()
    new = running_elastic().parallelism(6).spec(managedBy="kueue.x-k8s.io/multikueue").build()
    found = find(
        validate_job(new, old, managed=True),
        "spec.parallelism",
        "runs on a worker cluster",
        "does not resize an elastic job that MultiKueue dispatched",
    )
    assert (found.rule, found.origin) == ("JOB-K3", "K")


def test_an_elastic_indexed_job_scales_completions_with_parallelism() -> None:
    indexed = {"completionMode": "Indexed"}
    old = running_elastic().parallelism(4).completions(4).spec(**indexed).build()
    down = running_elastic().parallelism(3).completions(3).spec(**indexed).build()
    assert validate_job(down, old, managed=True) == []


def test_with_the_gate_off_an_elastic_job_is_held_to_its_size_and_told_of_elastic_jobs() -> None:
    old = running_elastic().parallelism(4).build()
    new = running_elastic().parallelism(2).build()
    found = find(
        validate_job(new, old, managed=True, elastic_jobs=False),
        "spec.parallelism",
        "cannot change while the job is admitted by kuota",
        f'{ELASTIC}: "true" may change its size while it runs',
    )
    assert found.rule == "JOB-K2"


def test_an_elastic_job_asks_for_no_required_or_preferred_topology() -> None:
    at = "spec.template.metadata.annotations[kueue.x-k8s.io/podset-{}-topology]"
    for mode in ("required", "preferred"):
        key = f"kueue.x-k8s.io/podset-{mode}-topology"
        elastic = user_job().annotations({ELASTIC: "true"}).template_annotations({key: "rack"})
        found = find(validate_job(elastic.build()), at.format(mode), f"{mode} topology is not")
        assert found.rule == "JOB-13"
        assert validate_job(elastic.build(), elastic_jobs=False) == []
    unconstrained = {"kueue.x-k8s.io/podset-unconstrained-topology": "true"}
    elastic = user_job().annotations({ELASTIC: "true"}).template_annotations(unconstrained)
    assert validate_job(elastic.build()) == []


def test_partial_admission_goes_with_an_elastic_annotation_when_the_gate_is_off() -> None:
    both = user_job().parallelism(4).annotations({MINP: "2", ELASTIC: "true"}).build()
    assert validate_job(both, elastic_jobs=False) == []
