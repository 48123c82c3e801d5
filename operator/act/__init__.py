"""The operator's ACT layer: carry out a plan, decide nothing.

observe → decide → act (docs/architecture.md). ``objects`` builds the Kubernetes
objects of one StreamApp as plain dicts, ``apply`` writes them idempotently (the
assignment with optimistic concurrency), ``status`` turns the decision core's status
into the StreamApp's ``status`` and ``events`` posts Kubernetes Events.
"""
