"""The pure parts of e2e/kueue_suites: reading Ginkgo's JUnit reports, counting each spec
once, grouping failures by cause, the table and the results files, kwok's agnhost stages, the
cluster's shape and the build's cache key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from e2e.cluster.kwok_config import STAGE_FILES
from e2e.kueue_suites import environment, kwok_stages, pod_exec, report
from e2e.kueue_suites.junit import first_line, parse
from e2e.kueue_suites.suites import DEFAULT_SUITES, DEFAULTS, parse_suites
from e2e.kueue_suites.tools import SUITES, KueueE2ETools, binary_name, is_complete, wrapper_go_mod

# As reporters/junit_report.go of Ginkgo v2.32 writes it (abridged).
JUNIT = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="7" disabled="2" errors="0" failures="2" time="120.5">
  <testsuite name="End To End Baseline Suite" package="/x/test/e2e/singlecluster/baseline"
      tests="7" disabled="0" skipped="2" errors="0" failures="2" time="120.5"
      timestamp="2026-11-27T10:00:00">
    <properties>
      <property name="SuiteSucceeded" value="false"></property>
      <property name="SpecialSuiteFailureReason" value=""></property>
    </properties>
    <testcase name="[BeforeSuite]" classname="End To End Baseline Suite" status="passed"
        time="3.2"></testcase>
    <testcase name="[It] Kueue when Creating a Job should unsuspend a job [feature:job]"
        classname="End To End Baseline Suite" status="passed" time="4.1"></testcase>
    <testcase name="[It] Kueue when Creating a Job should preempt [feature:job]"
        classname="End To End Baseline Suite" status="failed" time="90.0">
      <failure message="Timed out after 90.001s.&#xA;Expected&#xA;    &lt;bool&gt;: false"
          type="failed">[FAILED] Timed out after 90.001s.
In [It] at: /m/sigs.k8s.io/kueue@v0.19.2/test/e2e/singlecluster/baseline/job_test.go:412 @ 10:01
</failure>
    </testcase>
    <testcase name="[It] Kueue metrics should expose [feature:metrics]"
        classname="End To End Baseline Suite" status="timedout" time="30.0">
      <failure message="A suite timeout occurred" type="timedout">[TIMEDOUT] A timeout
In [It] at: /root/go/pkg/mod/sigs.k8s.io/kueue@v0.19.2/test/util/e2e.go:660 @ 11/27/26</failure>
    </testcase>
    <testcase name="[It] Kueue TAS should admit [feature:tas]" classname="End To End Baseline Suite"
        status="skipped" time="0.1">
      <skipped message="skipped - the cluster is too old"></skipped>
    </testcase>
    <testcase name="[It] Prometheus should scrape [area:prometheus, feature:prometheus]"
        classname="End To End Baseline Suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[ReportAfterSuite] Generate JUnit Report" classname="End To End Baseline Suite"
        status="passed" time="0.01"></testcase>
  </testsuite>
</testsuites>
"""

PASS = "Kueue when Creating a Job should unsuspend a job [feature:job]"
FAIL = "Kueue when Creating a Job should preempt [feature:job]"
TIMEOUT = "Kueue metrics should expose [feature:metrics]"
SKIP = "Kueue TAS should admit [feature:tas]"
PROM = "Prometheus should scrape [area:prometheus, feature:prometheus]"


def test_specs_and_suite_nodes_are_told_apart() -> None:
    parsed = parse(JUNIT)
    assert parsed.description == "End To End Baseline Suite"
    assert [o.name for o in parsed.specs] == [PASS, FAIL, TIMEOUT, SKIP, PROM]
    assert [o.node for o in parsed.suite_nodes] == ["BeforeSuite", "ReportAfterSuite"]
    assert not parsed.before_suite_failed


def test_outcomes_are_classified_as_ginkgo_states() -> None:
    by_name = {o.name: o for o in parse(JUNIT).specs}
    assert by_name[PASS].passed
    assert by_name[FAIL].failed and by_name[TIMEOUT].failed, "a timeout is a failure"
    assert by_name[SKIP].skipped_at_run_time and not by_name[SKIP].filtered_out
    assert by_name[PROM].filtered_out and not by_name[PROM].skipped_at_run_time
    assert by_name[FAIL].location == "test/e2e/singlecluster/baseline/job_test.go:412"
    assert by_name[TIMEOUT].location == "test/util/e2e.go:660"
    assert first_line(by_name[FAIL].message) == "Timed out after 90.001s."


def test_a_failed_before_suite_is_seen() -> None:
    text = JUNIT.replace(
        '<testcase name="[BeforeSuite]" classname="End To End Baseline Suite" status="passed"',
        '<testcase name="[BeforeSuite]" classname="End To End Baseline Suite" status="failed"',
    )
    assert parse(text).before_suite_failed


def run(**overrides: object) -> report.SuiteRun:
    fields: dict[str, object] = {
        "suite": "singlecluster/baseline",
        "inventory": (PASS, FAIL, TIMEOUT, SKIP, PROM, "Never run", "Excluded one"),
        "selected": (PASS, FAIL, TIMEOUT, SKIP, "Never run"),
        "excluded": {"Excluded one": "reads Kueue's own log"},
        "report": parse(JUNIT),
        "seconds": 600.0,
    }
    fields.update(overrides)
    return report.SuiteRun(**fields)  # type: ignore[arg-type]


def test_every_spec_of_the_inventory_is_counted_exactly_once() -> None:
    states = report.spec_states(run())
    assert states == {
        PASS: "passed",
        FAIL: "failed",
        TIMEOUT: "failed",
        SKIP: "skipped",
        PROM: "not selected",
        "Never run": "not run",
        "Excluded one": "excluded",
    }
    row = report.row(run())
    assert (row.specs, row.ran, row.passed, row.failed, row.skipped) == (7, 4, 1, 2, 1)
    assert (row.excluded, row.not_selected, row.not_run) == (1, 1, 1)


def test_without_a_report_every_selected_spec_is_not_run() -> None:
    row = report.row(run(report=None, error="the suite binary wrote no JUnit report"))
    assert (row.passed, row.failed, row.not_run, row.not_selected) == (0, 0, 5, 1)


def test_repeated_spec_texts_stay_distinct() -> None:
    assert report.numbered(["a", "b", "a", "a"]) == ["a", "b", "a (#2)", "a (#3)"]


def test_the_table_lines_up() -> None:
    text = report.table([report.row(run()), report.row(run(suite="sequential/baseline"))])
    lines = text.splitlines()
    assert lines[0].split() == [*report.HEADERS[:7], "not", "selected", "not", "run", "minutes"]
    assert len({len(line) for line in lines}) == 1, "every line as wide as the header"
    expected = ["singlecluster/baseline", "7", "4", "1", "2", "1", "1", "1", "1", "10.0"]
    assert lines[2].split() == expected


CAUSES = report.load_causes(
    yaml.safe_load(
        """
- cause: needs exec into a pod
  locations: ['test/util/e2e\\.go:660']
- cause: preemption is not Kueue's
  suites: [sequential/baseline]
  specs: ['preempt']
"""
    )
)


def test_failures_are_grouped_by_the_first_matching_cause() -> None:
    groups = dict(report.failure_groups([run()], CAUSES))
    assert groups["needs exec into a pod"] == [("singlecluster/baseline", TIMEOUT)]
    # the second cause is for another suite: the failure stays unclassified, by location
    (unclassified,) = [cause for cause in groups if cause.startswith("unclassified")]
    assert "job_test.go:412" in unclassified and "Timed out after 90.001s." in unclassified
    assert groups[unclassified] == [("singlecluster/baseline", FAIL)]


def test_exclusions_become_one_skip_pattern_per_suite() -> None:
    exclusions = report.load_exclusions(
        [
            {"suite": "*", "spec": "version of Kueue", "reason": "reads the binary's version"},
            {"suite": "sequential/baseline", "spec": "pprof", "reason": "Kueue's profiler"},
        ]
    )
    assert report.skip_regex(exclusions, "singlecluster/baseline") == "(?:version of Kueue)"
    assert report.skip_regex(exclusions, "sequential/baseline") == (
        "(?:version of Kueue)|(?:pprof)"
    )
    assert exclusions[1].matches("sequential/baseline", "exposes pprof endpoints")
    assert not exclusions[1].matches("singlecluster/baseline", "exposes pprof endpoints")


def test_results_name_date_commit_command_and_every_spec() -> None:
    text = report.document(
        [run(error="[BeforeSuite] failed")],
        CAUSES,
        date="2026-11-27 10:00 UTC",
        commit="abc123",
        command="make test-kueue-e2e",
        environment="## Environment\n\nkwok.",
    )
    assert "- date: 2026-11-27 10:00 UTC" in text and "- commit: abc123" in text
    assert "`make test-kueue-e2e`" in text
    assert "| singlecluster/baseline | 7 | 4 | 1 | 2 | 1 | 1 | 1 | 1 | 10.0 |" in text
    assert "**singlecluster/baseline**: [BeforeSuite] failed" in text
    assert "- **1** (singlecluster/baseline): needs exec into a pod" in text
    for name in run().inventory:
        assert f"| {report._escape(name)} |" in text
    assert "| excluded | Excluded one | reads Kueue's own log |" in text


def test_the_repository_files_load() -> None:
    package = Path(report.__file__).parent
    report.load_causes(yaml.safe_load((package / "causes.yaml").read_text()))
    for exclusion in report.load_exclusions(
        yaml.safe_load((package / "exclusions.yaml").read_text())
    ):
        assert exclusion.reason and "\n" not in exclusion.reason
        assert exclusion.suite == "*" or exclusion.suite in SUITES


# -- kwok's stages -------------------------------------------------------------------------


def _by_name() -> dict[str, dict]:
    return {stage["metadata"]["name"]: stage for stage in kwok_stages.agnhost_stages()}


def _expressions(stage: dict) -> dict[str, dict]:
    return {e["key"]: e for e in stage["spec"]["selector"]["matchExpressions"]}


def test_exit_fast_completes_only_pods_that_do_not_restart() -> None:
    stage = _by_name()["agnhost-exit-fast"]
    expressions = _expressions(stage)
    assert expressions[kwok_stages.EXIT_FAST] == {
        "key": kwok_stages.EXIT_FAST,
        "operator": "In",
        "values": ["true"],
    }
    assert expressions[".spec.restartPolicy"]["operator"] == "NotIn"
    assert "phase: Succeeded" in stage["spec"]["next"]["statusTemplate"]
    assert "entrypoint-tester" in kwok_stages.EXIT_FAST


def test_a_deleted_pod_ends_as_its_container_would() -> None:
    stages = _by_name()
    stop = stages["agnhost-stop"]["spec"]["next"]["statusTemplate"]
    failing = stages["agnhost-stop-failing"]["spec"]["next"]["statusTemplate"]
    assert "exitCode: 0" in stop and "phase: Succeeded" in stop
    assert "exitCode: 143" in failing and "phase: Failed" in failing
    assert "test-webserver" in kwok_stages.FAILS_ON_EXIT
    # the two never both match: the same query, In vs NotIn
    a = _expressions(stages["agnhost-stop"])[kwok_stages.FAILS_ON_EXIT]["operator"]
    b = _expressions(stages["agnhost-stop-failing"])[kwok_stages.FAILS_ON_EXIT]["operator"]
    assert {a, b} == {"In", "NotIn"}


def test_deletion_waits_until_the_pod_no_longer_runs() -> None:
    stages = _by_name()
    delete = _expressions(stages["pod-delete"])
    phase = {"key": ".status.phase", "operator": "NotIn", "values": ["Running"]}
    assert delete[".status.phase"] == phase
    for name in ("agnhost-stop", "agnhost-stop-failing"):
        assert _expressions(stages[name])[".status.phase"]["values"] == ["Running"]
    assert stages["pod-delete"]["spec"]["next"] == {"delete": True}


def test_render_keeps_kwoks_node_and_ready_stages_only(tmp_path: Path) -> None:
    for name in STAGE_FILES:
        (tmp_path / name).write_text(
            yaml.safe_dump({"kind": "Stage", "metadata": {"name": name.removesuffix(".yaml")}})
        )
    documents = list(yaml.safe_load_all(kwok_stages.render(tmp_path)))
    assert documents[0]["kind"] == "KwokConfiguration"
    names = [d["metadata"]["name"] for d in documents[1:]]
    assert names == [
        "node-initialize",
        "node-heartbeat-with-lease",
        "pod-ready",
        "agnhost-exit-fast",
        "agnhost-exit-0",
        "agnhost-exit-code",
        "agnhost-stop",
        "agnhost-stop-failing",
        "pod-delete",
    ]


def test_an_exit_asked_through_exec_ends_the_pod_with_that_code() -> None:
    stages = _by_name()
    zero = stages["agnhost-exit-0"]["spec"]["next"]["statusTemplate"]
    other = stages["agnhost-exit-code"]["spec"]["next"]["statusTemplate"]
    assert "exitCode: 0" in zero and "phase: Succeeded" in zero
    assert "phase: Failed" in other
    assert f'index $.metadata.annotations "{pod_exec.EXIT_CODE_ANNOTATION}"' in other
    # never both: the asked code is 0 for one, anything but 0 for the other
    a = _expressions(stages["agnhost-exit-0"])[kwok_stages.EXIT_ASKED]
    b = _expressions(stages["agnhost-exit-code"])[kwok_stages.EXIT_ASKED]
    assert (a["operator"], a["values"]) == ("In", ["0"])
    assert (b["operator"], b["values"]) == ("NotIn", ["0"])


def test_render_appends_the_extra_objects(tmp_path: Path) -> None:
    for name in STAGE_FILES:
        (tmp_path / name).write_text(yaml.safe_dump({"kind": "Stage", "metadata": {"name": name}}))
    execs = pod_exec.cluster_execs(tmp_path)
    documents = list(yaml.safe_load_all(kwok_stages.render(tmp_path, extra=execs)))
    assert documents[-2:] == execs


# -- kubectl exec into kwok's pods ---------------------------------------------------------


def test_curl_command_lines_are_read_and_unknown_options_refused() -> None:
    request = pod_exec.parse_curl(
        ["-s", "-k", "-H", "Authorization: Bearer abc", "https://svc.ns.svc:8443/metrics"]
    )
    assert request.url == "https://svc.ns.svc:8443/metrics"
    assert request.headers == {"Authorization": "Bearer abc"}
    assert request.insecure and request.silent
    assert not pod_exec.parse_curl(["http://10.0.0.1:8080/readyz"]).silent
    with pytest.raises(pod_exec.Refused, match="without -k"):
        pod_exec.parse_curl(["https://svc.ns.svc:8443/metrics"])
    with pytest.raises(pod_exec.Refused, match="'-X'"):
        pod_exec.parse_curl(["-X", "POST", "http://10.0.0.1:8080/exit"])
    with pytest.raises(pod_exec.Refused, match="without a URL"):
        pod_exec.parse_curl(["-s"])


def test_only_cluster_dns_names_of_services_are_services() -> None:
    assert pod_exec.service_of("metrics.kueue-system.svc.cluster.local") == (
        "kueue-system",
        "metrics",
    )
    assert pod_exec.service_of("metrics.kueue-system.svc") == ("kueue-system", "metrics")
    assert pod_exec.service_of("10.245.0.7") is None
    assert pod_exec.service_of("a.b.c.svc") is None


def _service(target: object) -> dict:
    return {
        "metadata": {"name": "metrics"},
        "spec": {"ports": [{"name": "https", "port": 8443, "targetPort": target}]},
    }


def _slice(ready: bool, port: int = 9443) -> dict:
    return {
        "ports": [{"name": "https", "port": port}],
        "endpoints": [{"addresses": ["10.88.0.5"], "conditions": {"ready": ready}}],
    }


def test_a_service_port_leads_to_a_ready_endpoint_and_its_target_port() -> None:
    assert pod_exec.service_endpoint(_service("https"), [_slice(True)], 8443) == (
        "10.88.0.5",
        9443,
    )
    with pytest.raises(pod_exec.Refused, match="no ready endpoint"):
        pod_exec.service_endpoint(_service("https"), [_slice(False)], 8443)
    with pytest.raises(pod_exec.Refused, match="no port 80"):
        pod_exec.service_endpoint(_service("https"), [_slice(True)], 80)


def test_the_exit_code_comes_from_the_query() -> None:
    assert pod_exec.exit_code_of("code=1&timeout=2s&wait=2s") == 1
    assert pod_exec.exit_code_of("timeout=2s") == 0
    with pytest.raises(pod_exec.Refused):
        pod_exec.exit_code_of("code=one")


def test_cluster_execs_put_the_stand_ins_first_on_path(tmp_path: Path) -> None:
    curl_pods, everyone = pod_exec.cluster_execs(tmp_path)
    assert curl_pods["spec"]["selector"] == {"matchNamespaces": [pod_exec.CURL_POD_NAMESPACE]}
    assert "selector" not in everyone["spec"]
    env = {e["name"]: e["value"] for e in everyone["spec"]["execs"][0]["local"]["envs"]}
    assert env["PATH"].split(":")[0] == str(tmp_path / "pod-exec")
    assert pod_exec.SERVICE_ACCOUNT_ENV not in env
    for command in ("curl", "cat"):
        script = tmp_path / "pod-exec" / command
        assert script.stat().st_mode & 0o111
        assert f"e2e.kueue_suites.pod_exec {command}" in script.read_text()


# -- the cluster's shape -------------------------------------------------------------------


def test_the_workers_are_kinds() -> None:
    (on_demand, spot) = environment.kind_workers()
    assert (on_demand.name, on_demand.labels) == ("kind-worker", {"instance-type": "on-demand"})
    assert (spot.name, spot.labels) == ("kind-worker2", {"instance-type": "spot"})
    assert not on_demand.taints and not spot.taints


def test_the_tas_workers_are_kind_cluster_tas() -> None:
    nodes = environment.tas_workers()
    assert [n.name for n in nodes] == ["kind-worker"] + [f"kind-worker{i}" for i in range(2, 9)]
    racks = [
        (
            n.labels["cloud.provider.com/topology-block"],
            n.labels["cloud.provider.com/topology-rack"],
        )
        for n in nodes
    ]
    assert (
        racks == [("b1", "r1")] * 2 + [("b1", "r2")] * 2 + [("b2", "r1")] * 2 + [("b2", "r2")] * 2
    )
    assert {n.labels["cloud.provider.com/node-group"] for n in nodes} == {"tas-group"}


def test_the_suite_binary_sees_the_cluster_and_kueues_namespace(tmp_path: Path) -> None:
    env = environment.suite_env(tmp_path / "admin.kubeconfig", tmp_path)
    assert env["KUBECONFIG"] == str(tmp_path / "admin.kubeconfig")
    assert env["KUEUE_NAMESPACE"] == "kueue-system"
    assert env["E2E_TEST_AGNHOST_IMAGE"].startswith("registry.k8s.io/e2e-test-images/agnhost:")
    # The KubeRay specs read their Ray image from the environment and fail without it.
    assert env["KUBERAY_RAY_IMAGE"] and env["E2E_TEST_REDIS_IMAGE"]
    assert not [key for key in env if "PROXY" in key.upper()]


# -- the suites and the build --------------------------------------------------------------


def test_suites_parse_and_default() -> None:
    assert parse_suites("") == DEFAULT_SUITES
    assert parse_suites("tas/baseline, sequential/baseline") == (
        "tas/baseline",
        "sequential/baseline",
    )
    with pytest.raises(ValueError, match="unknown suite"):
        parse_suites("singlecluster/everything")
    assert all(d.reason for d in DEFAULTS.values() if d.label_filter)


def test_the_build_is_laid_out_like_kueues_tree(tmp_path: Path) -> None:
    tools = KueueE2ETools(tmp_path)
    suite = "singlecluster/baseline"
    assert binary_name(suite) == "singlecluster-baseline.test"
    # the suite's kueuectlPath: ../../../../bin/kubectl-kueue from its directory
    assert (tools.suite_dir(suite) / "../../../../bin/kubectl-kueue").resolve() == (
        tools.kueuectl.resolve()
    )
    assert not is_complete(tmp_path)
    assert "require sigs.k8s.io/kueue v0.19.2" in wrapper_go_mod()
    assert "tool sigs.k8s.io/kueue/cmd/kueuectl" in wrapper_go_mod()


def test_a_build_is_complete_for_the_binaries_asked_for(tmp_path: Path) -> None:
    from e2e.kueue_suites import tools as kueue_tools

    build = KueueE2ETools(tmp_path)
    (tmp_path / "VERSIONS").write_text(kueue_tools.stamp_text())
    build.kueuectl.parent.mkdir(parents=True)
    (build.project / "Makefile").write_text(kueue_tools.MAKEFILE_MARKER)
    marker = b"\0go.buildinfo\0dep\t" + kueue_tools.build_info_marker() + b"h1:x\n"
    for path in (build.kueuectl, build.suite_binary("singlecluster/baseline")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(marker)
        path.chmod(0o755)
    assert is_complete(tmp_path, ["singlecluster/baseline"])
    assert not is_complete(tmp_path, ["singlecluster/baseline", "sequential/baseline"])
    build.kueuectl.write_bytes(marker.replace(b"v0.19.2", b"v0.19.1"))
    assert not is_complete(tmp_path, ["singlecluster/baseline"]), "another Kueue's kueuectl"


def test_the_gist_of_a_failure_says_what_it_is_about() -> None:
    from e2e.kueue_suites.junit import gist

    not_found = """Timed out after 300.001s.
The function passed to Eventually failed at sigs.k8s.io/kueue@v0.19.2/test/util/e2e.go:328 with:
Expected success, but got an error:
    <*errors.StatusError | 0x75304906b40>:
    deployments.apps "jobset-controller-manager" not found
    {
        ErrStatus: {
"""
    assert gist(not_found) == (
        'Timed out after 300.001s. deployments.apps "jobset-controller-manager" not found'
    )
    expected = """Timed out after 45.001s.
The function passed to Eventually failed at x.go:104 with:
Expected
    <*bool | 0x39e7882f674>: true
to equal
    <*bool | 0x39e7882f758>: false
"""
    assert gist(expected) == (
        "Timed out after 45.001s. Expected <*bool | 0x39e7882f674>: true to equal "
        "<*bool | 0x39e7882f758>: false"
    )
    assert gist("") == "" and len(gist("x" * 500, 50)) == 50


def test_jobsets_manager_is_placed_on_the_real_node_and_uses_the_loaded_image() -> None:
    from e2e.kueue_suites import jobset_operator

    deployment = {
        "kind": "Deployment",
        "metadata": {"name": "jobset-controller-manager"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "manager", "image": "controller:latest"}],
                    "tolerations": [{"key": "x", "operator": "Exists"}],
                }
            }
        },
    }
    service = {"kind": "Service", "metadata": {"name": "jobset-webhook-service"}}
    selector = environment.REAL_NODE_SELECTOR
    toleration = environment.REAL_NODE_TOLERATION
    placed = jobset_operator.placed([deployment, service], selector, toleration)
    pod = placed[0]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == selector
    assert pod["tolerations"] == [{"key": "x", "operator": "Exists"}, toleration]
    assert pod["containers"][0]["image"] == jobset_operator.IMAGE
    assert pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert placed[1] == service
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "controller:latest"
    assert jobset_operator.IMAGE == "registry.k8s.io/jobset/jobset:v0.12.0"


def test_the_extended_suite_runs_a_controller_for_every_operator_it_waits_for() -> None:
    from e2e.cluster.frameworks import FRAMEWORKS
    from e2e.kueue_suites import framework_operators

    extended = DEFAULTS["singlecluster/extended"]
    for name in extended.operators:
        assert name == "jobset" or (
            name in FRAMEWORKS and name in framework_operators.DEPLOYMENTS
        ), name
    # The label filter selects no feature whose operator is missing: the BeforeSuite
    # would wait for it and fail the whole suite.
    assert "appwrapper" in extended.label_filter and "appwrapper" in extended.operators
    assert "trainjob" in extended.label_filter and "trainer" in extended.operators


def test_an_operators_stand_in_is_a_pause_pod_on_the_real_node_under_its_name() -> None:
    from e2e.kueue_suites import framework_operators

    namespace, name = framework_operators.DEPLOYMENTS["lws"]
    objects = framework_operators.stand_in(
        namespace, name, environment.REAL_NODE_SELECTOR, environment.REAL_NODE_TOLERATION
    )
    assert [o["kind"] for o in objects] == ["Namespace", "Deployment"]
    deployment = objects[1]
    assert (deployment["metadata"]["namespace"], deployment["metadata"]["name"]) == (
        "lws-system",
        "lws-controller-manager",
    )
    pod = deployment["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == environment.REAL_NODE_SELECTOR
    assert pod["tolerations"] == [environment.REAL_NODE_TOLERATION]
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()


def test_a_full_run_records_each_suite_in_its_own_file() -> None:
    from e2e.kueue_suites.__main__ import RESULTS_DIR, results_file

    assert results_file("singlecluster/baseline") == RESULTS_DIR / "singlecluster-baseline.md"
    assert len({results_file(suite) for suite in SUITES}) == len(SUITES)


def test_a_reports_start_and_length_are_read_from_ginkgos_junit() -> None:
    from e2e.kueue_suites.__main__ import junit_time

    xml = (
        '<testsuites tests="2" time="110.75"><testsuite name="S" tests="2" '
        'time="110.75" timestamp="2026-11-27T21:55:46"></testsuite></testsuites>'
    )
    assert junit_time(xml) == ("2026-11-27 21:55 UTC", 110.75)
