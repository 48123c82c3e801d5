"""The "image" every container of the pod runner starts from: this checkout.

The runner runs no images (``image`` is ignored, docs/pod-runner.md), so what an image
would provide comes from the runner's own environment, made this checkout's:

- ``PATH`` with the directory of the Python that runs the runner first, so a pod's
  ``command: [segue, ...]`` finds this project's ``segue`` (as the image's ``PATH``
  does) however the stack was started: ``.venv/bin/segue stack up`` with no venv
  activated, ``make demo`` or pytest;
- ``SEGUE_KSTREAMS_AGENT_JAR``: the Kafka Streams agent jar ``make`` builds, where the
  image keeps it at ``/opt/segue``. The operator takes the variable as
  ``--kstreams-agent-jar``'s default, so the ``segue-agent`` init containers of an
  operator installed as the README says copy a jar that is on this machine.

Only :data:`BASE_ENV_ALLOWLIST` of it reaches a container (``podspec.process_env``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from segue.operator.image import KSTREAMS_AGENT_JAR_ENV
from segue.stack.paths import KSTREAMS_JAR

# Variables the runner passes from its own environment, as an image would set them.
BASE_ENV_ALLOWLIST = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "JAVA_HOME",
    "SEGUE_CACHE",
    "TMPDIR",
    KSTREAMS_AGENT_JAR_ENV,
    # make coverage: coverage.py's subprocess patch, so a measured run measures the pods too.
    "COVERAGE_PROCESS_CONFIG",
)


def image_env(environ: Mapping[str, str], interpreter: str) -> dict[str, str]:
    """The runner's environment ``environ`` made the image's: ``interpreter``'s directory
    first on ``PATH``, and the agent jar unless ``environ`` names one already."""
    own = os.path.dirname(interpreter)
    rest = [d for d in environ.get("PATH", os.defpath).split(os.pathsep) if d and d != own]
    return {
        KSTREAMS_AGENT_JAR_ENV: str(KSTREAMS_JAR),
        **environ,
        "PATH": os.pathsep.join([own, *rest]),
    }
