"""segue.operator.status: ``segue status APP`` (and ``kubectl segue status APP``), one
screen for a StreamApp read through the API server alone.

A client of the operator, never part of it: the operator's reconcile code does not
import it (the layers contract in pyproject.toml). ``model`` is the screen as data (and
its stable JSON), ``waiting`` what the operator waits for, ``progress`` a learner's rate
and ETA between two reads, ``build`` the pure step from a StreamApp, its pods, events and
metrics pages to a screen, ``render`` the text form, ``fetch`` the only I/O (the API
server, pods' ``/metrics`` through its pod proxy), ``interrupts`` how ``--watch`` stops on
Ctrl-C (between reads, never inside one) and ``cli`` the command. The demo's live
view (``segue.stack.demo``) draws from ``waiting``, ``build`` and ``progress`` too.
"""
