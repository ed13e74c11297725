"""``kuota-multikueue``'s command line and Configuration: leader election on by default, under
its own Lease; the file's leaderElection and multiKueue sections, overridden by flags."""

from __future__ import annotations

from datetime import timedelta

from scheduler.api.config_file import load_configuration
from scheduler.api.operational import lease_problem
from scheduler.multikueue.app import build_parser, lease_from, settings_from

V1BETA2 = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}


def test_it_elects_a_leader_by_default_under_its_own_lease() -> None:
    lease = lease_from(build_parser().parse_args([]), None)
    assert lease.leader_elect and lease.name == "kuota-multikueue"
    assert lease.namespace == "kueue-system", "the Configuration's namespace, where its Secrets are"
    assert lease_problem(lease) is None
    assert not lease_from(build_parser().parse_args(["--no-leader-elect"]), None).leader_elect


def test_lease_timings_that_cannot_fence_are_refused() -> None:
    args = build_parser().parse_args(["--lease-duration=10", "--renew-deadline=10"])
    assert lease_problem(lease_from(args, None)) is not None


def test_the_file_names_the_lease_and_its_timings_and_flags_override_it() -> None:
    config = load_configuration(
        {
            **V1BETA2,
            "namespace": "mk",
            "leaderElection": {
                "leaderElect": True,
                "resourceName": "c1f6bfd2.kueue.x-k8s.io",
                "resourceNamespace": "leases",
                "leaseDuration": "30s",
                "renewDeadline": "20s",
                "retryPeriod": "5s",
            },
        }
    ).config
    lease = lease_from(build_parser().parse_args([]), config)
    # Not the scheduler's Lease, which is named resourceName itself.
    assert lease.name == "c1f6bfd2.kueue.x-k8s.io-multikueue"
    assert (lease.namespace, lease.lease_duration, lease.renew_deadline, lease.retry_period) == (
        "leases",
        30.0,
        20.0,
        5.0,
    )
    flagged = lease_from(
        build_parser().parse_args(["--lease-name=mine", "--renew-deadline=12"]), config
    )
    assert (flagged.name, flagged.renew_deadline, flagged.lease_duration) == ("mine", 12.0, 30.0)


def test_changes_are_watched_and_the_full_pass_is_a_slow_resync() -> None:
    settings = settings_from(None, 2.0, build_parser().parse_args([]).resync)
    assert settings.resync == 30.0 and settings.min_interval <= 0.2
    assert settings_from(load_configuration(V1BETA2).config, 1.0, 45.0).resync == 45.0


def test_the_multikueue_section_sets_the_collector_and_the_dispatcher() -> None:
    defaults = settings_from(load_configuration(V1BETA2).config, 2.0)
    assert defaults.gc_interval == timedelta(minutes=1), "Kueue's default"
    assert defaults.dispatcher == "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
    config = load_configuration(
        {
            **V1BETA2,
            "multiKueue": {
                "gcInterval": "0s",
                "origin": "mine",
                "workerLostTimeout": "2m",
                "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
                "incrementalDispatcherConfig": {"stepSize": 2},
            },
        }
    ).config
    settings = settings_from(config, 2.0)
    assert (settings.gc_interval, settings.origin, settings.worker_lost_timeout) == (
        timedelta(0),
        "mine",
        timedelta(minutes=2),
    )
    assert settings.dispatcher.endswith("incremental") and settings.step_size == 2
