"""What the harness knows about each suite: default filters and their reasons (pure data).

Kueue's CI runs each suite against a cluster that also has the operators the
suite's BeforeSuite waits for.  Where this environment cannot have one, the
suite runs with a label filter that leaves the specs needing it out; they are
counted as "not selected", and the reason is written into the results file.  (An
exclusion, by contrast, names one spec that inspects Kueue's binary rather
than the cluster: ``exclusions.yaml``.)
"""

from __future__ import annotations

from dataclasses import dataclass

from .tools import SUITES

DEFAULT_SUITES = ("singlecluster/baseline", "sequential/baseline")


@dataclass(frozen=True)
class SuiteDefaults:
    label_filter: str = ""
    reason: str = ""
    """Why the label filter leaves specs out."""
    timeout_minutes: int = 240
    operators: tuple[str, ...] = ()
    """What the harness installs besides kuota (``jobset``: JobSet's release install)."""


DEFAULTS = {
    "singlecluster/baseline": SuiteDefaults(
        label_filter="!feature:prometheus",
        reason=(
            "`feature:prometheus` specs need a Prometheus (prometheus-operator) scraping the "
            "cluster; with them selected the BeforeSuite waits for "
            "monitoring/prometheus-prometheus and fails the whole suite"
        ),
    ),
    "sequential/baseline": SuiteDefaults(),
    "tas/baseline": SuiteDefaults(),
    "singlecluster/extended": SuiteDefaults(
        label_filter=(
            "feature:jobset || feature:leaderworkerset || feature:kuberay || feature:mpijob"
            " || feature:pytorchjob || feature:jaxjob || feature:appwrapper || feature:trainjob"
        ),
        reason=(
            "every framework spec is selected. JobSet runs from its release manifests "
            "(e2e/kueue_suites/jobset_operator.py); LeaderWorkerSet, KubeRay, the MPI "
            "operator, the training operator, the AppWrapper controller and Kubeflow Trainer "
            "run as kuota's framework tests run them (e2e/kueue_suites/framework_operators.py)"
        ),
        operators=(
            "jobset",
            "lws",
            "kuberay",
            "mpi-operator",
            "training-operator",
            "appwrapper",
            "trainer",
        ),
    ),
    "multikueue/baseline": SuiteDefaults(),
}
assert set(DEFAULTS) == set(SUITES)


def parse_suites(text: str) -> tuple[str, ...]:
    """``a,b`` or ``a b`` -> the suites, checked against those built (pure)."""
    names = tuple(name for name in text.replace(",", " ").split() if name)
    unknown = [name for name in names if name not in SUITES]
    if unknown:
        raise ValueError(f"unknown suite(s) {unknown}; known: {', '.join(SUITES)}")
    return names or DEFAULT_SUITES
