"""One store of one task on local disk: RocksDB (through rocksdict).

Why RocksDB: measured against sqlite3 on the worker's own access pattern it was
3-4x faster for commit batches, point reads, read-modify-write and restore
batches (docs/benchmarks.md, "Worker"; ``bench/worker/store_engines.py``).

The one rule this module keeps: data and the changelog checkpoint
(``checkpoint``) change together, in one RocksDB ``WriteBatch`` (the checkpoint
lives in its own column family), so after any crash the store holds exactly the
changelog prefix its checkpoint names. ``store`` writes committed transactions
through it, ``restore`` writes changelog batches through it. Any RocksDB error
surfaces as :class:`StoreCorrupt`; the caller wipes the directory and restores.
Except a full volume (:class:`StoreFull`: no space, a quota, a file-size limit): the
files hold a committed prefix as always, so the caller keeps them and retries.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import rocksdict

from segue.worker.state.checkpoint import Checkpoint, decode, encode

META_CF = "segue-meta"
CHECKPOINT_KEY = b"checkpoint"


class StoreCorrupt(Exception):
    """The local store cannot be opened or read: wipe it and restore it."""


class StoreFull(Exception):
    """The volume refuses writes (no space left, a quota, a file-size limit): the state
    on disk is still the committed prefix its checkpoint names; keep it and retry once
    there is room, never wipe (that would only make the restore need the room again)."""


# How the operating system words a full volume (strerror of ENOSPC, EDQUOT, EFBIG);
# RocksDB's IOError carries it ("IO error: While appending to file: ...: File too large").
FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
FULL_ERRORS = ("No space left on device", "Disk quota exceeded", "File too large")


def failure(what: str, path: Path, exc: BaseException) -> Exception:
    """The store error an engine error is: :class:`StoreFull` or :class:`StoreCorrupt`."""
    if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
        full: str | None = exc.strerror
    else:
        full = next((words for words in FULL_ERRORS if words in str(exc)), None)
    if full is not None:  # the cause first: a task error's message is cut at 200 characters
        return StoreFull(f"volume full ({full}): {what} {path}: {exc}")
    return StoreCorrupt(f"{what} {path}: {exc}")


class StoreLocked(Exception):
    """Another handle (in this process or another) still holds the store's lock:
    the state is fine, the store is busy; retry later, never wipe."""


def _options() -> rocksdict.Options:
    opts = rocksdict.Options(raw_mode=True)
    opts.create_if_missing(True)
    opts.create_missing_column_families(True)
    opts.set_paranoid_checks(True)
    # Many stores share a pod: keep each one's memtables small.
    opts.set_write_buffer_size(8 << 20)
    opts.set_max_write_buffer_number(2)
    opts.set_keep_log_file_num(2)
    opts.set_max_log_file_size(1 << 20)
    return opts


class Engine:
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self._closed = False
        try:
            path.mkdir(parents=True, exist_ok=True)
            access = rocksdict.AccessType.read_only() if read_only else None
            kwargs = {"access_type": access} if access is not None else {}
            self._db = rocksdict.Rdict(
                str(path),
                _options(),
                column_families={META_CF: rocksdict.Options(raw_mode=True)},
                **kwargs,
            )
            # Both keep the DB (and its LOCK) alive: close() must drop them.
            self._meta: Any = self._db.get_column_family_handle(META_CF)
            self._meta_view: Any = self._db.get_column_family(META_CF)
        except Exception as exc:  # rocksdict raises plain Exception subclasses
            if "lock" in str(exc).lower():
                raise StoreLocked(f"store at {path} is locked: {exc}") from exc
            raise failure("cannot open store at", path, exc) from exc

    def get(self, key: bytes) -> bytes | None:
        try:
            value = self._db.get(key)
        except Exception as exc:
            raise StoreCorrupt(f"read failed in {self.path}: {exc}") from exc
        return None if value is None else bytes(value)

    def range(self, start: bytes, end: bytes) -> Iterator[tuple[bytes, bytes]]:
        try:
            for key, value in self._db.items(from_key=start):
                raw_key = bytes(cast(bytes, key))
                if raw_key >= end:
                    return
                yield raw_key, bytes(cast(bytes, value))
        except Exception as exc:
            raise StoreCorrupt(f"scan failed in {self.path}: {exc}") from exc

    def checkpoint(self) -> Checkpoint | None:
        """The stored checkpoint; raises ``CorruptCheckpoint`` if it is damaged."""
        try:
            raw = self._meta_view.get(CHECKPOINT_KEY)
        except Exception as exc:
            raise StoreCorrupt(f"reading the checkpoint failed in {self.path}: {exc}") from exc
        return None if raw is None else decode(bytes(raw))

    def write(self, changes: Mapping[bytes, bytes | None], checkpoint: Checkpoint) -> None:
        """Apply ``changes`` (``None`` deletes) and set ``checkpoint``, atomically."""
        batch = rocksdict.WriteBatch(raw_mode=True)
        for key, value in changes.items():
            if value is None:
                batch.delete(key)
            else:
                batch.put(key, value)
        batch.put(CHECKPOINT_KEY, encode(checkpoint), self._meta)
        try:
            self._db.write(batch)
        except Exception as exc:
            raise failure("write failed in", self.path, exc) from exc

    def size_bytes(self) -> int:
        return directory_bytes(self.path)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            # Closing a damaged store must not stop the worker.
            with contextlib.suppress(Exception):
                self._meta_view.close()
            self._meta_view = self._meta = None
            with contextlib.suppress(Exception):
                self._db.close()


def directory_bytes(path: Path) -> int:
    total = 0
    try:
        for child in path.rglob("*"):
            try:
                if child.is_file():
                    total += child.stat().st_size
            except OSError:
                continue
    except OSError:
        return total
    return total


def wipe(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
