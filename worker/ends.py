"""The changelogs' end offsets, read on a thread of their own for the lag reports.

``report`` says how far each restoring store is behind from its changelog's last
stable offset, read every few seconds in one batched ListOffsets call
(``kafka.Admin.end_offsets``). That call waits for the partitions' leaders: after a
broker is lost for good it waited its whole timeout on every try, and on the main
loop, tried again as soon as it returned, it stopped every task of the worker for
over a minute (a three-broker fault test). So it runs here, off the loop: the loop
starts a read when one is due and none is running (:meth:`EndsReader.step`), and
applies the last one that finished, on the loop, where task state lives. A read
that fails or finds no answer leaves those ends as they were.
"""

from __future__ import annotations

import logging
import threading

from confluent_kafka import KafkaException

from segue.worker.kafka import Admin
from segue.worker.state.restore import Restorer
from segue.worker.taskset import TaskSet

log = logging.getLogger(__name__)

TIMEOUT = 2.0  # seconds a read may wait for the leaders' answers

Key = tuple[str, int]  # (changelog, partition)


class EndsReader:
    def __init__(self, admin: Admin) -> None:
        self.admin = admin
        self._thread: threading.Thread | None = None
        self._done: tuple[dict[Key, tuple[str, str]], dict[Key, int]] | None = None

    def step(self, tasks: TaskSet, restorer: Restorer) -> None:
        """On the loop: apply a finished read, start the next if none is running."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = None
        if self._done is not None:
            keys, ends = self._done
            self._done = None
            restorer.update_ends(ends)
            tasks.update_ends({keys[key]: end for key, end in ends.items() if key in keys})
        keys = tasks.changelog_partitions()
        if keys:
            self._thread = threading.Thread(
                target=self._read, args=(keys,), name="segue-ends", daemon=True
            )
            self._thread.start()

    def _read(self, keys: dict[Key, tuple[str, str]]) -> None:
        try:
            self._done = (keys, self.admin.end_offsets(list(keys), timeout=TIMEOUT))
        except KafkaException as exc:
            log.debug("end offsets unavailable: %s", exc)
