"""A task's size, as the assignor weighs it: its active owner's whole store."""

from __future__ import annotations

from segue.operator.scaling import PodObs, Published, Roles
from segue.operator.scaling.placement import state_sizes


def test_a_learner_s_larger_partial_store_does_not_set_the_task_s_size() -> None:
    # a half-restored store can report more bytes than the whole (it is not compacted)
    pods = {
        "a-0": PodObs("a-0", running=True, state_bytes={"1_0": 14_000, "1_1": 14_000}),
        "a-2": PodObs("a-2", running=True, state_bytes={"1_1": 20_000}),
    }
    published = Published(3, {"a-0": Roles(active=("1_0", "1_1")), "a-2": Roles(learning=("1_1",))})
    assert state_sizes(pods, ["1_0", "1_1"], published) == {"1_0": 14_000, "1_1": 14_000}


def test_without_an_owner_reporting_the_largest_copy_counts() -> None:
    pods = {
        "a-0": PodObs("a-0", running=True, state_bytes={"1_0": 9_000}),
        "a-1": PodObs("a-1", running=True, state_bytes={"1_0": 12_000}),
    }
    assert state_sizes(pods, ["1_0", "1_9"], None) == {"1_0": 12_000}
    gone = Published(2, {"a-7": Roles(active=("1_0",))})  # its owner's pod is not here
    assert state_sizes(pods, ["1_0"], gone) == {"1_0": 12_000}


def test_changelog_bytes_rule_over_disk_usage() -> None:
    """Disk usage wobbles with a store's fixed files; the changelog bytes are what a
    restore reads. A task no copy reports changelog bytes for falls back to disk usage."""
    pods = {
        "a-0": PodObs(
            "a-0",
            running=True,
            state_bytes={"1_0": 90_000, "1_1": 80_000, "1_2": 70_000},
            changelog_bytes={"1_0": 13_986, "1_1": 14_000},
        ),
        "a-2": PodObs("a-2", running=True, changelog_bytes={"1_1": 7_000}),
    }
    published = Published(3, {"a-0": Roles(active=("1_0", "1_1", "1_2"))})
    sizes = state_sizes(pods, ["1_0", "1_1", "1_2"], published)
    assert sizes == {"1_0": 13_986, "1_1": 14_000, "1_2": 70_000}
