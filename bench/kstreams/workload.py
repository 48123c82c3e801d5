"""The workload every side gets (docs/benchmarks.md, "Side by side with Kafka Streams"):
``--words`` distinct words prefilled, one a line keyed by the word, then steady input at
``--rate`` lines/s around the scale request; the output followed as a downstream consumer
reads it (``measure``), and every count checked exact at the end."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from segue.stack.apps import SteadyInput
from tests.operator.e2e import exact_counts
from tests.operator.test_e2e_scaling import PARTITIONS
from tests.worker.harness import produce

from .measure import Lateness, Seen, TopicReader, input_times, lateness, read_all


class Workload:
    """Input written and output followed for one run."""

    def __init__(self, bootstrap: str, source: str, output: str, args: argparse.Namespace) -> None:
        self.bootstrap, self.source, self.args = bootstrap, source, args
        self.reader = TopicReader(bootstrap, output, PARTITIONS)
        self.reader.start()
        self.sent: dict[str, int] = {}
        self.steady: SteadyInput | None = None
        self.outputs: list[Seen] = []
        self.started = self.stopped = 0.0

    def prefill(self) -> None:
        words = [f"w{i}" for i in range(self.args.words)]
        produce(self.bootstrap, self.source, ((w, w) for w in words))
        self.sent = dict.fromkeys(words, 1)
        self.reader.wait_for(len(words), 900)

    def up_to_scale(self, scale: Callable[[], None]) -> float:
        """Prefill, steady input, then ``scale()``; when it was asked (Unix s)."""
        self.prefill()
        time.sleep(self.args.settle)
        self.start_steady()
        time.sleep(self.args.settle)
        scaled = time.time()
        scale()
        return scaled

    def start_steady(self) -> None:
        n = self.args.words

        def line(i: int) -> tuple[str, str, str]:
            word = f"w{(i * 7919) % n}"
            return word, word, word

        self.steady = SteadyInput(
            self.bootstrap, self.source, self.args.rate, line, partitioner="murmur2_random"
        )
        self.steady.start()
        self.started = time.time()

    def finish(self, scaled: float) -> Lateness:
        assert self.steady is not None
        for word, n in self.steady.stop().items():
            self.sent[word] = self.sent.get(word, 0) + n
        self.stopped = time.time()
        self.reader.wait_for(sum(self.sent.values()), 600)
        time.sleep(1)
        outputs = self.outputs = self.reader.stop()
        exact_counts([(o.partition, 0, o.key, o.value) for o in outputs], self.sent)
        times = input_times(read_all(self.bootstrap, self.source, PARTITIONS))
        return lateness(outputs, times, self.started, scaled, self.stopped)
