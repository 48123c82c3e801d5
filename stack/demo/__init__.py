"""``segue stack demo``: the main job as a live show on the local stack.

Segue is installed with its chart, WordCount from examples/ runs on prefilled state
under steady input, and a script of steps acts on it (``kubectl scale`` 2 -> 6 -> 3, a
pod killed, the input's partitions doubled, a burst an HPA reacts to) while a live
view shows each pod's tasks, restores and handovers. At the end: an HTML report with
PNG timelines and one JSON line (docs/demo.md).

Module map: ``show`` runs it all (stack, install, input, script, report, Ctrl-C);
``cluster`` installs and acts (the ``steps.Stage``); ``steps`` is the script;
``monitor`` watches; ``tally`` counts records and measures pauses; ``view`` draws;
``report`` writes the HTML and PNGs. ``steps`` and ``tally`` are what a soak run
reuses.
"""
