"""The worker's long-lived Kafka clients, made once per process.

The admin client, the input consumer and the restore consumer live as long as the
process; the input and restore consumers are :class:`~segue.worker.renewing.Renewing`,
so one that librdkafka has left with no broker is replaced in place (``renewing``
says why) and counted in ``segue_kafka_clients_renewed{client}``. Each active task's
producer comes from :attr:`Clients.producer_for`: made per task, so a fence or a
retry gets a fresh one anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from confluent_kafka import Consumer, Producer

from segue.protocol.names import transactional_id
from segue.worker import kafka
from segue.worker.config import WorkerConfig
from segue.worker.metrics import WorkerMetrics
from segue.worker.renewing import Renewing
from segue.worker.state.restore import restore_consumer_config

INPUT = "input"
RESTORE = "restore"


@dataclass(frozen=True)
class Clients:
    admin: kafka.Admin
    renewing: tuple[Renewing, ...]  # checked by the loop each turn (renew_if_lost)
    consumer: Consumer  # the input consumer (a Renewing: every Consumer call forwarded)
    restore_consumer: Consumer
    producer_for: Callable[[str], Producer]

    def renew_lost(self) -> None:
        for client in self.renewing:
            client.renew_if_lost()


def make_clients(config: WorkerConfig, application_id: str, metrics: WorkerMetrics) -> Clients:
    extra = {**kafka.CLIENT_DEFAULTS, **config.kafka}
    bootstrap = config.bootstrap_servers

    def renewed(name: str) -> None:
        metrics.clients_renewed.labels(client=name).inc()

    consumer = Renewing(
        INPUT, kafka.input_consumer_config(bootstrap, application_id, extra), renewed=renewed
    )
    restore = Renewing(
        RESTORE, restore_consumer_config(bootstrap, application_id, extra), renewed=renewed
    )
    exactly_once = config.processing_guarantee == "exactly_once"

    def producer_for(task: str) -> Producer:
        txn = transactional_id(application_id, task) if exactly_once else None
        return Producer(kafka.producer_config(bootstrap, txn, extra))

    return Clients(
        admin=kafka.Admin(bootstrap, extra),
        renewing=(consumer, restore),
        # Renewing forwards every Consumer call to its current client.
        consumer=cast(Consumer, consumer),
        restore_consumer=cast(Consumer, restore),
        producer_for=producer_for,
    )
