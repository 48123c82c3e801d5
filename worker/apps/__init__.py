"""Example applications, runnable with ``segue worker --app segue.worker.apps.<name>:topology``.

- ``wordcount``: seed 003's WordCount (split, repartition by word, count, output);
- ``windowed``: per-key count and sum in tumbling event-time windows, with grace;
- ``tally``: a count per key whose every update says who processed it and when
  (the probe for handover pauses in tests and ``bench/worker``).
"""
