"""A full volume is not damage: the engine says :class:`StoreFull`, the files keep the
committed prefix they held, and once there is room again the same store opens and
takes writes. The volume is "full" through RLIMIT_FSIZE 0 on a child process (no
root needed): every write that would extend a file fails with EFBIG, as writes on a
full filesystem fail with ENOSPC. Output goes through a pipe, which the limit spares.
A restore batch a store refuses fails its task, not the worker's loop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from segue.worker import INT64, STRING
from segue.worker.state.engine import Engine, StoreCorrupt, StoreFull, failure
from segue.worker.state.restore import Restorer, Restoring
from segue.worker.state.store import TaskStore
from segue.worker.topology import StoreSpec

SCRIPT = """
import resource, sys
from pathlib import Path
from segue.worker.state.checkpoint import Checkpoint
from segue.worker.state.engine import Engine, StoreFull

base, seen = Path(sys.argv[1]), []
engine = Engine(base / "kept")
engine.write({b"k": b"1"}, Checkpoint("t", 0, 1))
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
for attempt in (lambda: engine.write({b"k": b"2"}, Checkpoint("t", 0, 2)),
                lambda: Engine(base / "new")):
    try:
        attempt()
        seen.append("written")
    except StoreFull as exc:
        seen.append(f"full: {exc}")
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
try:  # room again, but RocksDB keeps refusing through the handle whose write failed
    engine.write({b"k": b"2"}, Checkpoint("t", 0, 2))
    seen.append("written")
except StoreFull:
    seen.append("still refused")
engine.close()
engine = Engine(base / "kept")
seen.append(f"{engine.get(b'k')!r} {engine.checkpoint().offset}")
engine.write({b"k": b"3"}, Checkpoint("t", 0, 3))
seen.append(f"{engine.get(b'k')!r}")
print("\\n".join(seen))
"""


def test_a_full_volume_keeps_the_committed_state_and_recovers(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    write, open_, refused, kept, after = done.stdout.splitlines()
    assert write.startswith("full: volume full (File too large): write failed in"), write
    assert open_.startswith("full: volume full (File too large): cannot open store at"), open_
    assert refused == "still refused"  # hence a StoreFull task reopens its store
    assert kept == "b'1' 1"  # the committed prefix, as its checkpoint names
    assert after == "b'3'"


def test_full_volume_errors_are_told_from_damage() -> None:
    path = Path("/x")
    assert isinstance(failure("write failed in", path, OSError(28, "No space left")), StoreFull)
    quota = Exception("IO error: While appending to file: x: Disk quota exceeded")
    assert isinstance(failure("write failed in", path, quota), StoreFull)
    damaged = failure("cannot open store at", path, Exception("Corruption: bad block"))
    assert isinstance(damaged, StoreCorrupt)
    assert str(damaged) == "cannot open store at /x: Corruption: bad block"


def test_a_store_that_refuses_a_restore_batch_fails_its_task_not_the_loop(
    tmp_path: Path,
) -> None:
    """The restore consumer has moved past the batch: the store must not be written
    past it later, so its task is handed back to be failed (and the loop goes on)."""
    engine = Engine(tmp_path / "s")
    store = TaskStore(StoreSpec("counts", STRING, INT64), "app-counts-changelog", 0, engine)
    engine.close()  # every write now fails, as on a damaged or full volume
    restorer = Restorer(consumer=None)  # type: ignore[arg-type]  # _apply reads no Kafka
    entry = Restoring("1_0", store, target=10)
    assert not restorer._apply(entry, {b"k": b"\x00" * 8}, 5, 1, 9)
    assert store.offset == 0
    failed = restorer.take_failed()
    assert set(failed) == {"1_0"}
    assert isinstance(failed["1_0"], (StoreCorrupt, StoreFull))
    assert restorer.take_failed() == {}
