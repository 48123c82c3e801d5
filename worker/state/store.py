"""A task's changelogged store: what a processor reads and writes.

Writes are staged per record (so a record that fails leaves no trace), then per
transaction; reads see the record's and the transaction's own writes first,
then the engine. Nothing reaches disk before the Kafka transaction that carries
the same writes to the changelog has committed, and Kafka shows it so: ``active``
produces :meth:`TaskStore.changelog_writes` inside the task's transaction and, once
it committed, calls :meth:`TaskStore.commit` with the last changelog offset; the
writes then wait in memory (still read) until the changelog's last stable offset,
read every few seconds (``ends``), is past them (:meth:`TaskStore.confirm`), which
writes the data and the checkpoint in one atomic batch (``engine``). Why wait: a
restart of the only broker once told the worker a transaction committed and then
aborted it on every partition (its markers skipped, docs/reliability.md); the store
had kept its writes and counted a word twice. An instance that ends drops what is
not confirmed (:meth:`TaskStore.abort`), so the next one restores the tail as Kafka
has it. After a crash the store therefore holds a committed prefix of its changelog,
and ``restore`` only has to read the tail. Standbys write through
:meth:`TaskStore.apply_restored` instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from segue.worker.state.checkpoint import Checkpoint
from segue.worker.state.engine import Engine
from segue.worker.topology import StoreSpec


class TaskStore:
    def __init__(self, spec: StoreSpec, changelog: str, partition: int, engine: Engine) -> None:
        self.spec = spec
        self.name = spec.name
        self.changelog = changelog
        self.partition = partition
        self.engine = engine
        self._pending: dict[bytes, bytes | None] = {}
        self._txn: dict[bytes, bytes | None] = {}
        # Committed transactions not yet seen below the changelog's last stable offset:
        # (next offset, writes, records, bytes) in commit order, and all their writes.
        self._unconfirmed: list[tuple[int, dict[bytes, bytes | None], int, int]] = []
        self._confirming: dict[bytes, bytes | None] = {}
        checkpoint = engine.checkpoint()
        self.offset = 0 if checkpoint is None else checkpoint.offset  # next changelog offset
        # Changelog records this store applied since it was created empty (restored or
        # written) and their key+value bytes: the size of its changelog as a restore from
        # nothing reads it. Kept in the checkpoint, so a reopened store still knows it.
        self.changelog_records = 0 if checkpoint is None else checkpoint.records
        self.changelog_bytes = 0 if checkpoint is None else checkpoint.nbytes
        self._durable = (self.offset, self.changelog_records, self.changelog_bytes)

    # -- the processor's view (segue.worker.processor.KeyValueStore) --

    def _raw_key(self, key: Any) -> bytes:
        raw = self.spec.key.serialize(key)
        if raw is None:
            raise ValueError(f"store {self.name!r}: keys cannot be None")
        return raw

    def _lookup(self, raw: bytes) -> bytes | None:
        if raw in self._pending:
            return self._pending[raw]
        if raw in self._txn:
            return self._txn[raw]
        if raw in self._confirming:
            return self._confirming[raw]
        return self.engine.get(raw)

    def get(self, key: Any) -> Any | None:
        return self.spec.value.deserialize(self._lookup(self._raw_key(key)))

    def put(self, key: Any, value: Any) -> None:
        if value is None:
            raise ValueError(f"store {self.name!r}: use delete() instead of put(key, None)")
        self._pending[self._raw_key(key)] = self.spec.value.serialize(value)

    def delete(self, key: Any) -> None:
        self._pending[self._raw_key(key)] = None

    def range(self, start: Any, end: Any) -> Iterator[tuple[Any, Any]]:
        low, high = self._raw_key(start), self._raw_key(end)
        merged: dict[bytes, bytes | None] = dict(self.engine.range(low, high))
        for layer in (self._confirming, self._txn, self._pending):
            merged.update((k, v) for k, v in layer.items() if low <= k < high)
        for raw in sorted(merged):
            value = merged[raw]
            if value is not None:
                yield self.spec.key.deserialize(raw), self.spec.value.deserialize(value)

    # -- one record --

    def accept_record(self) -> None:
        if self._pending:
            self._txn.update(self._pending)
            self._pending.clear()

    def reject_record(self) -> None:
        self._pending.clear()

    # -- one transaction --

    def changelog_writes(self) -> Mapping[bytes, bytes | None]:
        """The latest value of every key written in this transaction (None: tombstone)."""
        return self._txn

    def commit(self, last_changelog_offset: int | None) -> None:
        """The transaction committed; ``last_changelog_offset`` is the offset of its
        last changelog record (None if it wrote none). Its writes wait for
        :meth:`confirm` to reach disk."""
        if last_changelog_offset is None:
            self._txn.clear()
            return
        records = len(self._txn)
        nbytes = sum(len(k) + len(v or b"") for k, v in self._txn.items())
        next_offset = last_changelog_offset + 1
        self._unconfirmed.append((next_offset, self._txn, records, nbytes))
        self._confirming.update(self._txn)
        self._txn = {}
        self.offset = next_offset
        self.changelog_records += records
        self.changelog_bytes += nbytes

    def confirm(self, stable: int) -> None:
        """The changelog's last stable offset is ``stable``: the committed transactions
        below it are Kafka's for good (one that ended aborted ends this instance
        first, and with it what is not confirmed): write them, data and checkpoint
        in one atomic batch."""
        done = [batch for batch in self._unconfirmed if batch[0] <= stable]
        if not done:
            return
        changes: dict[bytes, bytes | None] = {}
        for _, writes, _, _ in done:
            changes.update(writes)
        _, records, nbytes = self._durable
        records += sum(b[2] for b in done)
        nbytes += sum(b[3] for b in done)
        checkpoint = Checkpoint(self.changelog, self.partition, done[-1][0], records, nbytes)
        self.engine.write(changes, checkpoint)
        self._durable = (done[-1][0], records, nbytes)
        self._unconfirmed = self._unconfirmed[len(done) :]
        self._confirming = {}
        for _, writes, _, _ in self._unconfirmed:
            self._confirming.update(writes)

    @property
    def unconfirmed(self) -> int:
        """Committed transactions whose writes wait for :meth:`confirm`."""
        return len(self._unconfirmed)

    def _write(
        self, changes: Mapping[bytes, bytes | None], next_offset: int, records: int, nbytes: int
    ) -> None:
        """Data and checkpoint (offset and running totals) in one atomic write."""
        records += self.changelog_records
        nbytes += self.changelog_bytes
        checkpoint = Checkpoint(self.changelog, self.partition, next_offset, records, nbytes)
        self.engine.write(changes, checkpoint)
        self.offset = next_offset
        self.changelog_records, self.changelog_bytes = records, nbytes
        self._durable = (next_offset, records, nbytes)

    def abort(self) -> None:
        """The instance writing this store ends (failed, fenced, stopped, demoted):
        drop every write not on disk; the store is its checkpoint again."""
        self._pending.clear()
        self._txn.clear()
        self._unconfirmed.clear()
        self._confirming.clear()
        self.offset, self.changelog_records, self.changelog_bytes = self._durable

    # -- restoration --

    def apply_restored(
        self,
        changes: Mapping[bytes, bytes | None],
        next_offset: int,
        records: int = 0,
        nbytes: int = 0,
    ) -> None:
        """Write a restored batch: ``records`` changelog records of ``nbytes`` key+value
        bytes were read (``changes`` keeps only each key's last value)."""
        self._write(changes, next_offset, records, nbytes)

    def close(self) -> None:
        self.abort()
        self.engine.close()
