"""Store engines on the worker's own access pattern: RocksDB (rocksdict, what the
worker uses: ``segue.worker.state.engine.Engine``) against sqlite3 (stdlib, WAL).

Both write data and the changelog checkpoint in one atomic batch, as the worker
requires. Workloads: commit batches (1,000 updates of 50,000 keys per commit),
point reads, WordCount's read-modify-write with a commit every 1,000 updates,
restore batches (10,000 new 100-byte values per write), a range scan.

    .venv/bin/python -m bench.worker.store_engines
"""

from __future__ import annotations

import os
import random
import sqlite3
import struct
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from segue.worker.state.checkpoint import Checkpoint, encode
from segue.worker.state.engine import Engine, directory_bytes


class SqliteEngine:
    """The same contract as ``Engine`` on sqlite3: WAL, synchronous=NORMAL (durable
    against a process crash, like RocksDB's WAL without fsync)."""

    def __init__(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path / "store.sqlite", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID"
        )
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v BLOB NOT NULL)")

    def get(self, key: bytes) -> bytes | None:
        row = self.db.execute("SELECT v FROM kv WHERE k=?", (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def range(self, start: bytes, end: bytes) -> Iterator[tuple[bytes, bytes]]:
        yield from self.db.execute(
            "SELECT k, v FROM kv WHERE k >= ? AND k < ? ORDER BY k", (start, end)
        )

    def write(self, changes: Mapping[bytes, bytes | None], checkpoint: Checkpoint) -> None:
        puts = [(k, v) for k, v in changes.items() if v is not None]
        deletes = [(k,) for k, v in changes.items() if v is None]
        self.db.execute("BEGIN")
        if puts:
            self.db.executemany("INSERT OR REPLACE INTO kv VALUES (?, ?)", puts)
        if deletes:
            self.db.executemany("DELETE FROM kv WHERE k = ?", deletes)
        self.db.execute(
            "INSERT OR REPLACE INTO meta VALUES ('checkpoint', ?)", (encode(checkpoint),)
        )
        self.db.execute("COMMIT")

    def size_bytes(self) -> int:
        return directory_bytes(self.path)

    def close(self) -> None:
        self.db.close()


def run(engine: Any) -> dict[str, float]:
    rng = random.Random(1)
    keys = [b"key-%08d" % i for i in range(50_000)]
    out: dict[str, float] = {}
    offset = 0

    n, began = 300_000, time.perf_counter()
    for b in range(n // 1000):
        changes = {keys[rng.randrange(len(keys))]: struct.pack(">q", b) for _ in range(1000)}
        offset += len(changes)
        engine.write(changes, Checkpoint("c", 0, offset))
    out["commit batches (updates/s)"] = n / (time.perf_counter() - began)

    began = time.perf_counter()
    for _ in range(n):
        engine.get(keys[rng.randrange(len(keys))])
    out["point reads (reads/s)"] = n / (time.perf_counter() - began)

    began, buffer = time.perf_counter(), {}
    for _ in range(n):
        key = keys[rng.randrange(len(keys))]
        raw = buffer.get(key) or engine.get(key)
        buffer[key] = struct.pack(">q", (struct.unpack(">q", raw)[0] if raw else 0) + 1)
        if len(buffer) >= 1000:
            offset += 1
            engine.write(buffer, Checkpoint("c", 0, offset))
            buffer = {}
    out["WordCount read-modify-write (records/s)"] = n / (time.perf_counter() - began)

    value, began = os.urandom(100), time.perf_counter()
    for b in range(100):
        engine.write(
            {b"r-%09d" % (b * 10_000 + i): value for i in range(10_000)}, Checkpoint("c", 0, b)
        )
    out["restore batches (puts/s)"] = 1_000_000 / (time.perf_counter() - began)

    began = time.perf_counter()
    scanned = sum(1 for _ in engine.range(b"r-000000000", b"r-000200000"))
    out["range scan (entries/s)"] = scanned / (time.perf_counter() - began)
    out["size on disk (MB)"] = engine.size_bytes() / 1e6
    engine.close()
    return out


def main() -> str:
    with tempfile.TemporaryDirectory(prefix="segue-engines-") as tmp:
        results = {
            "RocksDB (rocksdict)": run(Engine(Path(tmp) / "rocksdb")),
            "sqlite3 (WAL)": run(SqliteEngine(Path(tmp) / "sqlite")),
        }
    names = list(results)
    lines = [f"| workload | {' | '.join(names)} | ratio |", "|---|---|---|---|"]
    for metric in results[names[0]]:
        a, b = results[names[0]][metric], results[names[1]][metric]
        fmt = "{:,.1f}" if "MB" in metric else "{:,.0f}"
        lines.append(f"| {metric} | {fmt.format(a)} | {fmt.format(b)} | {a / b:.1f}x |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(main())
