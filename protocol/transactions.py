"""The workers' transaction timeout: a promise both sides of the contract build on.

Every task's producer sets ``transaction.timeout.ms`` to :data:`TIMEOUT_MS`
(``segue.worker.kafka``), so the transaction coordinator rolls back an open transaction
of the app no later than this after it began, plus its own abort check. The operator
relies on that bound to tell a transaction nobody will end from a live one
(``segue.operator.scaling.hanging``): a last stable offset that stays put longer than
any transaction of the app can run is held by one that will never end by itself.
"""

from __future__ import annotations

TIMEOUT_MS = 10_000
"""A dead owner's open transaction blocks read_committed readers of its topics until the
next owner fences it or this timeout aborts it."""
ABORT_CHECK_MS = 10_000
"""How often the coordinator looks for transactions past their timeout: Kafka's default
``transaction.abort.timed.out.transaction.cleanup.interval.ms``."""
