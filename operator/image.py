"""Where the operator's image keeps the Kafka Streams agent jar, and the variable that
names another path (docs/kafka-streams.md, "Adoption").

The Dockerfile copies the jar there (tests/test_image.py holds the two together); the
local stack's pod runner, whose "image" is this checkout, names the jar ``make`` builds
instead (docs/pod-runner.md, "Environment"). Plain strings in a module of their own:
``segue operator``'s flags default to them, and ``segue --help`` must not load the
settings' pydantic models to build those flags.
"""

from __future__ import annotations

from typing import Final

KSTREAMS_AGENT_JAR: Final = "/opt/segue/segue-kstreams.jar"
KSTREAMS_AGENT_JAR_ENV: Final = "SEGUE_KSTREAMS_AGENT_JAR"
