"""The image: its Dockerfile, its pins, and its install steps run for real.

No container engine runs here, so this parses the Dockerfile and runs exactly its
``RUN`` steps, with its ``ENV``/``ARG`` values, in a clean virtualenv standing for the
image's Python: the build stage builds the wheel from a copy of what the stage
``COPY``\\s and fetches the pinned closure; the runtime stage installs it offline. Then
the image's entry point answers. The only difference from a real build is where the
wheels come from: a local wheelhouse (``PIP_NO_INDEX``/``PIP_FIND_LINKS``), so the test
does not download half a gigabyte each run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
CONSTRAINTS = ROOT / "constraints.txt"
DEV_ONLY = {"pytest", "ruff", "mypy", "hypothesis", "import-linter", "segue-stack", "cryptography"}


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def values(self, keyword: str) -> dict[str, str]:
        """``ENV`` or ``ARG`` names and their (default) values, in order."""
        out: dict[str, str] = {}
        for kw, rest in self.instructions:
            if kw == keyword:
                for item in shlex.split(rest):
                    name, _, value = item.partition("=")
                    out[name] = value
        return out

    def all(self, keyword: str) -> list[str]:
        return [rest for kw, rest in self.instructions if kw == keyword]


def parse(text: str) -> tuple[dict[str, str], list[Stage]]:
    """Global ARGs and the stages of a Dockerfile (continuations joined, comments out)."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    globals_: dict[str, str] = {}
    stages: list[Stage] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            parts = rest.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(parts[0], name))
        elif not stages and keyword == "ARG":
            name, _, value = rest.partition("=")
            globals_[name] = value
        else:
            stages[-1].instructions.append((keyword, rest))
    return globals_, stages


GLOBALS, STAGES = parse(DOCKERFILE.read_text())
BUILD, RUNTIME = STAGES


def test_the_dockerfile_is_lint_clean() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), str(DOCKERFILE)], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_is_pinned_non_root_labelled_and_runs_segue() -> None:
    image = GLOBALS["PYTHON_IMAGE"]
    assert image.startswith("python:3.11."), image
    assert image.count(".") == 2, image  # an exact patch release, not a floating tag
    assert BUILD.base == RUNTIME.base == "${PYTHON_IMAGE}"
    (user,) = RUNTIME.all("USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit(), user  # numeric, so runAsNonRoot can verify it
    assert gid.isdigit(), user
    assert int(uid) > 0, user
    labels = shlex.split(" ".join(RUNTIME.all("LABEL")))
    keys = {label.partition("=")[0] for label in labels}
    for key in ("version", "source", "licenses"):
        assert f"org.opencontainers.image.{key}" in keys
    assert json.loads(RUNTIME.all("ENTRYPOINT")[0]) == ["segue"]
    assert json.loads(RUNTIME.all("CMD")[0]) == ["operator"]
    assert (
        RUNTIME.values("ARG")["VERSION"]
        == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    )


def pins(text: str) -> dict[str, str]:
    out = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            out[name.lower().replace("_", "-")] = version
    return out


def test_constraints_pin_the_runtime_closure_and_nothing_of_dev() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = pins(CONSTRAINTS.read_text())
    direct = pins("\n".join(project["dependencies"]))
    assert {name: locked.get(name) for name in direct} == direct
    assert not DEV_ONLY & set(locked)


def wheelhouse() -> Path:
    """Every wheel the image installs, plus setuptools to build ours: fetched once per
    set of pins into $SEGUE_CACHE (pip's own cache makes a refetch cheap)."""
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    key = hashlib.sha256((CONSTRAINTS.read_text() + "\n".join(build)).encode()).hexdigest()[:12]
    cache = Path(os.environ.get("SEGUE_CACHE") or Path.home() / ".cache" / "segue")
    house = cache / f"wheelhouse-{key}"
    if not (house / ".complete").exists():
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(house)]
        subprocess.run([*pip, "--only-binary=:all:", "-r", str(CONSTRAINTS)], check=True)
        subprocess.run([*pip, *build], check=True)
        (house / ".complete").touch()
    return house


def run_stage(stage: Stage, root: Path, workdir: Path, env: dict[str, str]) -> None:
    """The stage's RUN steps, with its ENV and ARG values; absolute paths live under root."""
    values = {**GLOBALS, **stage.values("ARG"), **stage.values("ENV")}
    for name, value in values.items():
        env[name] = str(root / value.lstrip("/")) if value.startswith("/") else value
    for command in stage.all("RUN"):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", command],
            cwd=workdir,
            env=env,
            check=False,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"RUN {command}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"


@pytest.mark.timeout(900)
def test_the_image_install_steps_and_entry_point_work_from_a_fresh_wheel(tmp_path: Path) -> None:
    house = wheelhouse()
    python = tmp_path / "image-python"
    subprocess.run([sys.executable, "-m", "venv", str(python)], check=True)
    env = {
        "PATH": f"{python / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(house),
    }
    root = tmp_path / "root"
    (workdir,) = BUILD.all("WORKDIR")
    context = root / workdir.lstrip("/")
    for copy in BUILD.all("COPY"):
        *sources, _ = copy.split()
        for source in sources:
            target = context / source.rstrip("/")
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / source, target)
    run_stage(BUILD, root, context, env)

    for copy in RUNTIME.all("COPY"):
        parts = copy.split()
        if parts[0].startswith("--from="):
            continue  # the build stage's /wheels is already under root
        source, dest = parts
        (root / dest.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / source, root / dest.lstrip("/"))
    run_stage(RUNTIME, root, tmp_path, env)
    assert not (root / "wheels").exists()  # the image keeps no wheels

    entry = json.loads(RUNTIME.all("ENTRYPOINT")[0])
    default = json.loads(RUNTIME.all("CMD")[0])
    segue = [str(python / "bin" / entry[0]), *entry[1:]]
    top = subprocess.run([*segue, "--help"], env=env, capture_output=True, text=True, check=True)
    assert "operator" in top.stdout
    assert "worker" in top.stdout
    assert "stack" not in top.stdout  # the test stack is not in the image
    for args in ([*default, "--help"], ["worker", "--help"]):
        subprocess.run([*segue, *args], env=env, capture_output=True, check=True)
    example = "from segue.worker.cli import load_topology; load_topology('{}')"
    for app in ("segue.worker.apps.wordcount:topology", "segue.worker.apps.tally:topology"):
        subprocess.run([str(python / "bin" / "python"), "-c", example.format(app)], check=True)
    listed = subprocess.run(
        [str(python / "bin" / "python"), "-m", "pip", "list", "--format=json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installed = pins("\n".join(f"{p['name']}=={p['version']}" for p in json.loads(listed)))
    assert not DEV_ONLY & set(installed)
    locked = pins(CONSTRAINTS.read_text())
    assert {n: installed.get(n) for n in locked} == locked
    site = next((python / "lib").glob("python3.*/site-packages"))
    size = sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
    print(f"installed wheel closure: {size / 1e6:.0f} MB")


SPARK_DOCKERFILE = ROOT / "images" / "spark" / "Dockerfile"
SPARK_CONSTRAINTS = ROOT / "constraints-spark.txt"


def test_the_spark_image_is_lint_clean_pinned_and_non_root() -> None:
    """images/spark/Dockerfile: the Segue image plus Java and the `spark` extra. Its run on
    Kubernetes is tested through its entry point (tests/pipeline/test_spark_k8s.py)."""
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), str(SPARK_DOCKERFILE)], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    _, stages = parse(SPARK_DOCKERFILE.read_text())
    final = stages[-1]
    assert final.base == "${SEGUE_IMAGE}"
    assert final.all("USER")[-1] == RUNTIME.all("USER")[0]  # back to the non-root user
    assert json.loads(final.all("ENTRYPOINT")[0]) == ["/opt/segue/spark-entrypoint.sh"]
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    locked = pins(SPARK_CONSTRAINTS.read_text())
    assert {n: locked.get(n) for n in pins("\n".join(extra["spark"]))} == pins(
        "\n".join(extra["spark"])
    )
    assert not set(locked) & set(pins(CONSTRAINTS.read_text()))  # on top of the runtime's
    assert not DEV_ONLY & set(locked)
