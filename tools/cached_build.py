"""Run a build step once per content of its inputs, keeping its outputs in the cache.

``python tools/cached_build.py NAME --inputs PATH... --outputs PATH... [--key TEXT]
-- COMMAND...``: the step's key is a sha256 over every input file (its path and bytes,
``__pycache__`` and ``target`` folders left out), each ``--key`` text (a tool's version
line) and the command itself. When ``$SEGUE_CACHE/builds/NAME/KEY`` holds the outputs of a
run that exited 0, they are copied back into place and the command is not run: a fresh
clone of a commit whose ``kstreams/`` and contract fixtures a green run has built and
tested already skips Maven and both JUnit runs, as the stack's stamps skip its builds.
Otherwise the command runs and, when it succeeds, its outputs are stored under the key
(the three newest keys per NAME are kept). A failed run stores nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

SKIPPED_DIRS = frozenset({"__pycache__", "target"})
KEPT = 3
DONE = ".done"


def cache_root() -> Path:
    return Path(os.environ.get("SEGUE_CACHE") or Path.home() / ".cache" / "segue") / "builds"


def input_files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in sorted(paths):
        if path.is_file():
            yield path
        elif path.is_dir():
            for sub in sorted(path.rglob("*")):
                if sub.is_file() and not SKIPPED_DIRS.intersection(sub.relative_to(path).parts):
                    yield sub
        else:
            raise SystemExit(f"cached_build: input {path} does not exist")


def build_key(inputs: Sequence[Path], extras: Sequence[str], command: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for file in input_files(inputs):
        digest.update(f"{file.as_posix()}\0".encode())
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    for text in [*extras, "\0".join(command)]:
        digest.update(f"{text}\0".encode())
    return digest.hexdigest()[:24]


def _copy(source: Path, dest: Path) -> None:
    if dest.is_dir():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, dest, symlinks=True)
    else:
        shutil.copy2(source, dest)


def restore(entry: Path, outputs: Sequence[Path]) -> None:
    """Copy a stored run's outputs back into place, dated now (so make sees them new)."""
    now = time.time()
    for index, output in enumerate(outputs):
        _copy(entry / str(index), output)
        for path in [output, *(output.rglob("*") if output.is_dir() else [])]:
            os.utime(path, (now, now), follow_symlinks=False)


def store(folder: Path, key: str, outputs: Sequence[Path]) -> None:
    """Keep ``outputs`` under ``key`` (written aside, then renamed: never half a store)."""
    entry, staging = folder / key, folder / f".{key}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    for index, output in enumerate(outputs):
        if not output.exists():
            raise SystemExit(f"cached_build: the command succeeded but left no {output}")
        _copy(output, staging / str(index))
    (staging / DONE).write_text(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    shutil.rmtree(entry, ignore_errors=True)
    staging.rename(entry)
    stored = sorted(
        (p for p in folder.iterdir() if (p / DONE).is_file()), key=lambda p: p.stat().st_mtime
    )
    for old in stored[:-KEPT]:
        shutil.rmtree(old, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the step's name: its folder under $SEGUE_CACHE/builds")
    parser.add_argument("--inputs", nargs="+", type=Path, required=True)
    parser.add_argument("--outputs", nargs="+", type=Path, required=True)
    parser.add_argument("--key", action="append", default=[], help="more text for the key")
    parser.add_argument("command", nargs="+", help="the step, after --")
    args = parser.parse_args(argv)
    key = build_key(args.inputs, args.key, args.command)
    folder = cache_root() / args.name
    entry = folder / key
    if (entry / DONE).is_file():
        restore(entry, args.outputs)
        os.utime(entry)  # the most recently used keys are the ones kept
        when = (entry / DONE).read_text().strip()
        print(f"{args.name}: inputs unchanged since its green run of {when} (key {key}): not rerun")
        return 0
    done = subprocess.run(args.command, check=False)
    if done.returncode == 0:
        folder.mkdir(parents=True, exist_ok=True)
        store(folder, key, args.outputs)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
