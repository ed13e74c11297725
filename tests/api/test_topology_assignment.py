"""The v1beta2 topology assignment encoding: Kueue's documented examples, and decode ∘ encode."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scheduler.api.topology_assignment import (
    HOSTNAME_LABEL,
    DomainAssignment,
    decode,
    encode,
    pod_count,
)

BLOCK, RACK = "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"


def test_one_node_is_one_universal_slice() -> None:
    encoded = encode([HOSTNAME_LABEL], [DomainAssignment(("kind-worker",), 1)])
    assert encoded == {
        "levels": [HOSTNAME_LABEL],
        "slices": [
            {
                "domainCount": 1,
                "valuesPerLevel": [{"universal": "kind-worker"}],
                "podCounts": {"universal": 1},
            }
        ],
    }


def test_a_shared_level_is_universal_and_the_others_keep_prefix_and_roots() -> None:
    domains = [
        DomainAssignment(("block-1", "rack-1"), 4),
        DomainAssignment(("block-1", "rack-2"), 2),
    ]
    assert encode([BLOCK, RACK], domains)["slices"] == [
        {
            "domainCount": 2,
            "valuesPerLevel": [
                {"universal": "block-1"},
                {"individual": {"prefix": "rack-", "roots": ["1", "2"]}},
            ],
            "podCounts": {"individual": [4, 2]},
        }
    ]


def test_a_root_may_be_empty_when_one_name_is_the_prefix_of_another() -> None:
    domains = [DomainAssignment(("kind-worker",), 1), DomainAssignment(("kind-worker2",), 1)]
    (level,) = encode([HOSTNAME_LABEL], domains)["slices"][0]["valuesPerLevel"]
    assert level == {"individual": {"prefix": "kind-worker", "roots": ["", "2"]}}


def test_hostname_prefix_runs_become_slices_when_that_is_shorter() -> None:
    domains = [
        DomainAssignment((f"gke-cluster-pool-{pool}-1234abcd-node-{i:02}",), 1 + i % 2)
        for pool in ("a", "b")
        for i in range(20)
    ]
    slices = encode([HOSTNAME_LABEL], domains)["slices"]
    assert [s["valuesPerLevel"][0]["individual"]["prefix"] for s in slices] == [
        "gke-cluster-pool-a-1234abcd-node-",
        "gke-cluster-pool-b-1234abcd-node-",
    ]
    assert slices[0]["valuesPerLevel"][0]["individual"]["roots"] == [f"{i:02}" for i in range(20)]
    assert slices[0]["podCounts"] == {"individual": [1 + i % 2 for i in range(20)]}


def test_one_slice_is_kept_when_its_json_is_shorter_than_the_runs() -> None:
    domains = [DomainAssignment((f"pool-1-node-{i}",), 1) for i in range(1, 6)] + [
        DomainAssignment((f"pool-2-node-{i}",), 1) for i in range(1, 8)
    ]
    encoded = encode([HOSTNAME_LABEL], domains)
    (only,) = encoded["slices"]
    assert only["domainCount"] == 12
    assert only["valuesPerLevel"][0]["individual"]["prefix"] == "pool-"
    assert only["podCounts"] == {"universal": 1}
    assert pod_count(encoded) == 12


NAMES = st.text(alphabet="ab-1", min_size=1, max_size=8)


@given(
    st.lists(
        st.tuples(NAMES, NAMES, st.integers(min_value=1, max_value=9)), min_size=0, max_size=12
    ),
    st.booleans(),
)
def test_decoding_gives_back_the_domains_in_order(
    rows: list[tuple[str, str, int]], hostname_level: bool
) -> None:
    levels = [BLOCK, HOSTNAME_LABEL if hostname_level else RACK]
    domains = [DomainAssignment((block, name), count) for block, name, count in rows]
    assert decode(encode(levels, domains)) == (tuple(levels), domains)
