"""``spark-submit`` entry: ``spark-submit [options] <this file> [segue simulate options]``.

spark-submit runs a Python application from a ``.py`` file, not from a console script,
so this file is that application: it hands its arguments to ``segue simulate``, which
then runs on the session spark-submit set up (its master, jars and configuration; see
:mod:`.session`). Find the path with
``python -c 'import segue.pipeline.spark.submit as m; print(m.__file__)'``.
"""

from __future__ import annotations

import sys

from segue.cli import main

if __name__ == "__main__":
    sys.exit(main(["simulate", *sys.argv[1:]]))
