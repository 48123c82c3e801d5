"""Unit tests of local state: the engine's atomic writes, a task store's layers,
and the rule that untrustworthy state is wiped, never served."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
import rocksdict

from segue.worker import INT64, STRING
from segue.worker.confirming import confirm, confirm_now
from segue.worker.ownership import Task
from segue.worker.restoring import Restoration
from segue.worker.state.checkpoint import Checkpoint
from segue.worker.state.engine import META_CF, Engine, StoreCorrupt, StoreLocked
from segue.worker.state.layout import StateLayout
from segue.worker.state.opening import open_store
from segue.worker.state.restore import Restorer
from segue.worker.state.store import TaskStore
from segue.worker.topics import ResolvedSub
from segue.worker.topology import StoreSpec

from .apps import wordcount_shape

SPEC = StoreSpec("counts", STRING, INT64)
CHANGELOG = "app-counts-changelog"


def test_engine_writes_data_and_checkpoint_together(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "s")
    assert engine.checkpoint() is None
    engine.write({b"a": b"1", b"b": b"2"}, Checkpoint("t", 0, 2))
    engine.write({b"a": None, b"c": b"3"}, Checkpoint("t", 0, 4))
    engine.close()
    reopened = Engine(tmp_path / "s")
    assert reopened.checkpoint() == Checkpoint("t", 0, 4)
    assert list(reopened.range(b"a", b"z")) == [(b"b", b"2"), (b"c", b"3")]
    assert reopened.size_bytes() > 0
    reopened.close()


def test_a_closed_engine_releases_its_lock(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "s")
    with pytest.raises(StoreLocked):
        Engine(tmp_path / "s")
    engine.close()
    Engine(tmp_path / "s").close()


def test_store_layers_record_transaction_and_disk(tmp_path: Path) -> None:
    store = TaskStore(SPEC, CHANGELOG, 0, Engine(tmp_path / "s"))
    store.put("a", 1)
    store.accept_record()
    store.put("a", 2)
    store.put("b", 5)
    assert store.get("a") == 2  # the record sees its own writes
    store.reject_record()  # the record failed: no trace
    assert store.get("a") == 1
    assert store.get("b") is None
    store.put("c", 3)
    store.delete("a")
    store.accept_record()
    assert dict(store.changelog_writes()) == {b"a": None, b"c": INT64.serialize(3)}
    assert list(store.range("a", "z")) == [("c", 3)]
    assert store.engine.get(b"c") is None  # nothing on disk before the commit
    store.commit(last_changelog_offset=41)
    assert store.offset == 42
    assert store.get("c") == 3
    assert store.engine.get(b"c") is None  # nor before Kafka shows it stable
    store.confirm(42)
    # two changelog records: a's tombstone (1 byte) and c (1 + 8 bytes)
    assert store.engine.checkpoint() == Checkpoint(CHANGELOG, 0, 42, records=2, nbytes=10)
    assert store.engine.get(b"c") == INT64.serialize(3)
    store.put("d", 1)
    store.accept_record()
    store.abort()  # an aborted transaction leaves the committed state
    assert store.get("d") is None
    assert store.get("c") == 3
    engine = store.engine
    store.close()
    reopened = TaskStore(SPEC, CHANGELOG, 0, Engine(engine.path))
    # reopened from disk, the store still knows its changelog's size (the operator's ruler)
    assert (reopened.changelog_records, reopened.changelog_bytes) == (2, 10)
    reopened.apply_restored({b"e": INT64.serialize(5)}, 50, records=3, nbytes=27)
    assert reopened.engine.checkpoint() == Checkpoint(CHANGELOG, 0, 50, records=5, nbytes=37)
    reopened.close()


def test_committed_writes_reach_disk_only_below_the_last_stable_offset(tmp_path: Path) -> None:
    """A restart of the only broker once said "committed" and then aborted the
    transaction on every partition (docs/reliability.md): the store must not keep it."""
    store = TaskStore(SPEC, CHANGELOG, 0, Engine(tmp_path / "s"))
    for offset, (key, value) in enumerate([("a", 1), ("b", 2), ("a", 3)], start=10):
        store.put(key, value)
        store.accept_record()
        store.commit(last_changelog_offset=offset)
    assert (store.offset, store.unconfirmed, store.changelog_records) == (13, 3, 3)
    assert list(store.range("a", "z")) == [("a", 3), ("b", 2)]  # read before they are on disk
    assert store.engine.checkpoint() is None
    store.confirm(11)  # the first transaction is below the last stable offset
    assert store.engine.checkpoint() == Checkpoint(CHANGELOG, 0, 11, records=1, nbytes=9)
    assert store.engine.get(b"a") == INT64.serialize(1)
    assert (store.unconfirmed, store.get("a")) == (2, 3)
    store.confirm(11)  # nothing new
    assert store.unconfirmed == 2
    # the instance ends before the rest is seen stable: it drops them, the store is its
    # checkpoint again, and the next instance restores the tail from 11 as Kafka has it
    store.abort()
    assert (store.offset, store.unconfirmed, store.changelog_records) == (11, 0, 1)
    assert (store.get("a"), store.get("b")) == (1, None)
    store.confirm(100)  # nothing left to write
    assert store.engine.checkpoint() == Checkpoint(CHANGELOG, 0, 11, records=1, nbytes=9)
    store.close()


def _open(layout: StateLayout, low: int = 0, end: int = 100) -> tuple[TaskStore, bool]:
    opened = open_store(
        layout,
        task="0_0",
        spec=SPEC,
        changelog=CHANGELOG,
        partition=0,
        watermarks=lambda topic, partition: (low, end),
    )
    return opened.store, opened.wiped


def _seed(layout: StateLayout, offset: int, topic: str = CHANGELOG) -> None:
    engine = Engine(layout.store_dir("0_0", "counts"))
    engine.write({b"k": INT64.serialize(7)}, Checkpoint(topic, 0, offset))
    engine.close()


def test_trusted_state_is_kept(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path, "app")
    _seed(layout, 60)
    store, wiped = _open(layout)
    assert (store.offset, wiped, store.get("k")) == (60, False, 7)
    store.close()
    assert layout.local_tasks() == ["0_0"]
    assert layout.local_checkpoints("0_0") == {"counts": Checkpoint(CHANGELOG, 0, 60)}


@pytest.mark.parametrize(
    ("offset", "topic", "low", "end"),
    [
        (160, CHANGELOG, 0, 100),  # ahead of the changelog (it was recreated)
        (5, CHANGELOG, 10, 100),  # behind the log start: records are gone
        (60, "other-changelog", 0, 100),  # another store's state
    ],
)
def test_untrustworthy_state_is_wiped(
    tmp_path: Path, offset: int, topic: str, low: int, end: int
) -> None:
    layout = StateLayout(tmp_path, "app")
    _seed(layout, offset, topic)
    store, wiped = _open(layout, low, end)
    assert wiped
    assert store.offset == low
    assert store.get("k") is None
    store.close()


def test_damaged_checkpoint_and_damaged_files_are_wiped(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path, "app")
    _seed(layout, 60)
    path = layout.store_dir("0_0", "counts")
    db = rocksdict.Rdict(
        str(path),
        rocksdict.Options(raw_mode=True),
        column_families={META_CF: rocksdict.Options(raw_mode=True)},
    )
    meta = db.get_column_family(META_CF)
    meta[b"checkpoint"] = b"SGC1garbage"
    del meta
    db.close()
    del db
    store, wiped = _open(layout)
    assert wiped
    assert store.get("k") is None
    store.close()

    _seed(layout, 60)
    (path / "CURRENT").write_bytes(b"nonsense\n")
    store, wiped = _open(layout)
    assert wiped
    assert store.get("k") is None
    store.close()


def test_a_store_ahead_of_its_committed_changelog_is_never_served(tmp_path: Path) -> None:
    """After the fence, a store past the changelog's last stable offset holds writes
    Kafka did not commit: the task fails to be wiped and restored, it does not run."""
    store = TaskStore(SPEC, CHANGELOG, 0, Engine(tmp_path / "s"))
    store.put("a", 1)
    store.accept_record()
    store.commit(last_changelog_offset=41)  # the store is at offset 42
    task = Task("1_0", cast(Any, None), cast(Any, None), "active", 1, stores={"counts": store})
    restoration = Restoration(
        "app",
        layout=StateLayout(tmp_path / "state", "app"),
        restorer=Restorer(cast(Any, None)),
        producer_factory=cast(Any, None),
        exactly_once=True,
    )
    with pytest.raises(
        StoreCorrupt, match="at changelog offset 42, past the last stable offset 40"
    ):
        restoration.restore_to(task, {"counts": 40})
    assert restoration.restore_to(task, {"counts": 42}) is False  # level: runs at once
    assert task.ends == {"counts": 42}
    store.close()


def _active(tmp_path: Path, name: str) -> Task:
    task = Task(name, wordcount_shape().get(1), ResolvedSub(1, tasks=2), "active", 1)
    store = TaskStore(SPEC, CHANGELOG, int(name[-1]), Engine(tmp_path / name))
    store.put("w", 1)
    store.accept_record()
    store.commit(last_changelog_offset=7)
    task.stores["counts"] = store
    return task


def test_the_ends_read_for_the_lag_reports_confirm_and_a_clean_stop_reads_them_once(
    tmp_path: Path,
) -> None:
    one, two = _active(tmp_path, "1_0"), _active(tmp_path, "1_1")
    tasks = {t.name: t for t in (one, two)}
    # the periodic read: each store up to its own changelog partition's end
    assert confirm(tasks, {("1_0", "counts"): 8, ("1_1", "counts"): 5}) == {}
    assert (one.stores["counts"].unconfirmed, two.stores["counts"].unconfirmed) == (0, 1)
    # at shutdown, one read of what still waits
    asked: list[list[tuple[str, int]]] = []

    def stable(partitions: list[tuple[str, int]], timeout: float) -> dict[tuple[str, int], int]:
        asked.append(partitions)
        return {p: 8 for p in partitions}

    confirm_now(tasks.values(), stable)
    assert asked == [[(CHANGELOG, 1)]]
    assert two.stores["counts"].engine.checkpoint() == Checkpoint(CHANGELOG, 1, 8, 1, 9)
    confirm_now(tasks.values(), stable)  # nothing waits: no read
    assert len(asked) == 1
    for task in (one, two):
        task.stores["counts"].close()
