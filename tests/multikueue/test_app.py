"""``kuota-multikueue``'s command line: leader election on by default, under its own Lease."""

from __future__ import annotations

from scheduler.multikueue.app import build_parser, check_lease_timings, settings_from


def test_it_elects_a_leader_by_default_under_its_own_lease() -> None:
    args = build_parser().parse_args([])
    assert args.leader_elect and args.lease_name == "kuota-multikueue"
    assert args.lease_namespace is None, "the Configuration's namespace, where its Secrets are"
    assert check_lease_timings(args) is None
    assert not build_parser().parse_args(["--no-leader-elect"]).leader_elect


def test_lease_timings_that_cannot_fence_are_refused() -> None:
    args = build_parser().parse_args(["--lease-duration=10", "--renew-deadline=10"])
    assert check_lease_timings(args) is not None


def test_changes_are_watched_and_the_full_pass_is_a_slow_resync() -> None:
    settings = settings_from(None, 2.0, build_parser().parse_args([]).resync)
    assert settings.resync == 30.0 and settings.min_interval <= 0.2
    raw = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    assert settings_from(raw, 1.0, 45.0).resync == 45.0
