"""The policies a scenario is replayed under: Segue's own and faithful baselines.

Each is a :class:`Controller` that looks at the simulated cluster once per tick and
changes the assignment and the pods, as the real system would (docs/pipeline.md,
"Policies"): :mod:`.segue` (the operator's real decision core), :mod:`.eager`
(stop-the-world), :mod:`.kip441` (Kafka Streams' HighAvailabilityTaskAssignor) and
:mod:`.keda` (KEDA's Kafka lag scaler driving the eager mover).
"""

from .base import Controller

__all__ = ["Controller"]
