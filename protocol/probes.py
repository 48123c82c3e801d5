"""How long a worker's ``/healthz`` may fail before its liveness probe restarts the pod:
a promise the worker's watchdog builds on (the operator writes the probe).

A task's commit runs on a thread of its own; a call of it stuck past its bound fails
``/healthz`` until the main loop abandons that commit and fences its producer anew
(``segue.worker.commit_threads``), no restart needed. The loop may itself be inside one
of its own bounded calls meanwhile (a fence's ``init_transactions`` or a read of the
committed offsets: 30 s plus the watchdog's 5 s grace), and a loop call past its bound
makes the worker exit by itself 2 s later. The probe outlasts all of that
(``tests/unit/test_watchdog.py`` holds the worker's bounds to it), so it restarts only a
worker that cannot mend itself. Seen with a 12 s probe: a broker leading the app's
transaction coordinators was lost for good, a commit's ``send_offsets_to_transaction``
hung while the loop spent 17 s fencing a retried task, and the probe restarted a worker
that would have abandoned the commit a few seconds later.
"""

from __future__ import annotations

from typing import Final

PERIOD_SECONDS: Final = 2
"""How often the kubelet asks a worker's ``/healthz`` and ``/readyz`` unless the app's
``spec.probes.periodSeconds`` says otherwise."""
LIVENESS_TOLERANCE_SECONDS: Final = 40
"""How long ``/healthz`` may keep failing before the pod restarts, whatever the period
(failureThreshold = this / the period, rounded up)."""
