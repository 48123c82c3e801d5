"""A full volume is not damage: the engine says :class:`StoreFull`, the files keep the
committed prefix they held, and once there is room again the same store opens and
takes writes. The volume is "full" through RLIMIT_FSIZE 0 on a child process (no
root needed): every write that would extend a file fails with EFBIG, as writes on a
full filesystem fail with ENOSPC. Output goes through a pipe, which the limit spares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from segue.worker.state.engine import StoreCorrupt, StoreFull, failure

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
engine.close()
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
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
    write, open_, kept, after = done.stdout.splitlines()
    assert write.startswith("full: volume full (File too large): write failed in"), write
    assert open_.startswith("full: volume full (File too large): cannot open store at"), open_
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
