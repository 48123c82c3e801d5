"""The image: its Dockerfile, its pins, and its build steps run for real.

No container engine runs here, so this parses the Dockerfile and runs it stage by stage,
instruction by instruction: each stage in a folder of its own standing for its file
system, exactly its ``RUN`` steps with its ``ENV``/``ARG`` values, its ``COPY``\\s from
the build context or (``--from``) from that stage's folder, and a clean virtualenv
standing for the image's Python. The ``kstreams`` stage builds the agent jar with Maven;
the ``build`` stage builds the wheel and fetches the pinned closure; the runtime stage
installs it offline and takes the jar. Then the image's entry point answers. The
differences from a real build are where things come from, never the ``RUN`` text: the
wheels from a local wheelhouse (``PIP_NO_INDEX``/``PIP_FIND_LINKS``), so the test does
not download half a gigabyte each run; Maven and Java 17 from the host (``mvn`` on
``PATH``), not the pinned Maven image, reading the repository ``make kstreams`` fills
(``$SEGUE_CACHE/m2``) offline, through a ``settings.xml`` in the build's ``HOME``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from segue.operator import image as operator_image

pytestmark = pytest.mark.stack  # a container build

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
CONSTRAINTS = ROOT / "constraints.txt"
POM = ROOT / "kstreams" / "pom.xml"
# Where the operator's init container finds the agent jar in its own image.
AGENT_JAR = "/opt/segue/segue-kstreams.jar"
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


def copy_parts(rest: str) -> tuple[dict[str, str], list[str], str]:
    """A ``COPY``'s flags (``--from=build`` as ``{"from": "build"}``), sources and
    destination."""
    flags: dict[str, str] = {}
    paths: list[str] = []
    for word in rest.split():
        if word.startswith("--"):
            name, _, value = word[2:].partition("=")
            flags[name] = value
        else:
            paths.append(word)
    *sources, dest = paths
    return flags, sources, dest


def pom(path: str) -> str:
    """A value of kstreams/pom.xml, by its element path (``properties/maven.compiler.release``)."""
    ns = "{http://maven.apache.org/POM/4.0.0}"
    value = ET.parse(POM).getroot().findtext("/".join(ns + part for part in path.split("/")))
    assert value, path
    return value


GLOBALS, STAGES = parse(DOCKERFILE.read_text())
NAMED = {stage.name: stage for stage in STAGES if stage.name}
KSTREAMS, BUILD, RUNTIME = NAMED["kstreams"], NAMED["build"], STAGES[-1]


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


def test_the_agent_jar_is_built_by_a_pinned_maven_on_the_poms_java() -> None:
    image = GLOBALS["MAVEN_IMAGE"]
    assert KSTREAMS.base == "${MAVEN_IMAGE}"
    maven, _, jdk = image.removeprefix("maven:").partition("-eclipse-temurin-")
    assert maven.startswith("3.9."), image
    assert maven.count(".") == 2, image  # an exact release, not a floating tag
    assert jdk == pom("properties/maven.compiler.release"), image


def test_every_copy_from_names_an_earlier_stage_and_the_jar_is_where_the_operator_looks() -> None:
    for index, stage in enumerate(STAGES):
        earlier = {s.name for s in STAGES[:index]}
        for copy in stage.all("COPY"):
            flags, _, _ = copy_parts(copy)
            if "from" in flags:
                assert flags["from"] in earlier, f"COPY {copy}: no such stage before it"
    (jar,) = [c for c in map(copy_parts, RUNTIME.all("COPY")) if c[0].get("from") == "kstreams"]
    flags, (source,), dest = jar
    # The operator's default must be the path in the image.
    assert dest == AGENT_JAR == operator_image.KSTREAMS_AGENT_JAR, dest
    (workdir,) = KSTREAMS.all("WORKDIR")
    assert source == f"{workdir}/target/{pom('artifactId')}-{pom('version')}.jar"
    # The init container runs as the image's user or the pod's, not as the owner (root).
    assert int(flags["chmod"], 8) & stat.S_IROTH, jar


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


def cache() -> Path:
    return Path(os.environ.get("SEGUE_CACHE") or Path.home() / ".cache" / "segue")


def wheelhouse() -> Path:
    """Every wheel the image installs, plus setuptools to build ours: fetched once per
    set of pins into $SEGUE_CACHE (pip's own cache makes a refetch cheap)."""
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    key = hashlib.sha256((CONSTRAINTS.read_text() + "\n".join(build)).encode()).hexdigest()[:12]
    house = cache() / f"wheelhouse-{key}"
    if not (house / ".complete").exists():
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(house)]
        subprocess.run([*pip, "--only-binary=:all:", "-r", str(CONSTRAINTS)], check=True)
        subprocess.run([*pip, *build], check=True)
        (house / ".complete").touch()
    return house


def maven_settings(home: Path) -> None:
    """Maven's user settings in the build's HOME: the repository ``make kstreams`` fills,
    offline once it exists (the first run fills it from Maven Central)."""
    repository = cache() / "m2"
    (home / ".m2").mkdir(parents=True, exist_ok=True)
    (home / ".m2" / "settings.xml").write_text(
        f"<settings><localRepository>{repository}</localRepository>"
        f"<offline>{str(repository.is_dir()).lower()}</offline></settings>\n"
    )


def copy_into(copy: str, root: Path, workdir: Path, roots: dict[str, Path]) -> None:
    """One ``COPY`` as a build does it: from the context or a stage's root; a folder's
    contents into the destination, a file to the destination or into it when it ends
    in ``/``; ``--chmod`` applied."""
    flags, sources, dest = copy_parts(copy)
    origin = roots[flags["from"]] if "from" in flags else ROOT
    target = root / dest.lstrip("/") if dest.startswith("/") else workdir / dest
    for source in sources:
        path = origin / source.lstrip("/")
        if path.is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(path, target, ignore=ignore, dirs_exist_ok=True)
            continue
        into = target / path.name if dest.endswith("/") or len(sources) > 1 else target
        into.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, into)
        if "chmod" in flags:
            into.chmod(int(flags["chmod"], 8))


def build_stage(stage: Stage, roots: dict[str, Path], base: Path, env: dict[str, str]) -> None:
    """One stage, instruction by instruction, in its own root folder under base (entered
    in roots by name), with its ENV and ARG values; absolute paths live under its root."""
    name = stage.name or "runtime"
    root = roots[name] = base / name
    root.mkdir(parents=True)
    env = dict(env)
    for key, value in {**GLOBALS, **stage.values("ARG"), **stage.values("ENV")}.items():
        env[key] = str(root / value.lstrip("/")) if value.startswith("/") else value
    workdir = root
    for keyword, rest in stage.instructions:
        if keyword == "WORKDIR":
            workdir = root / rest.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif keyword == "COPY":
            copy_into(rest, root, workdir, roots)
        elif keyword == "RUN":
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", rest],
                cwd=workdir,
                env=env,
                check=False,
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, f"RUN {rest}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"


@pytest.mark.timeout(900)
def test_the_image_builds_the_wheel_and_the_agent_jar_installs_them_and_runs(
    tmp_path: Path,
) -> None:
    house = wheelhouse()
    python = tmp_path / "image-python"
    subprocess.run([sys.executable, "-m", "venv", str(python)], check=True)
    env = {
        "PATH": f"{python / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(house),
    }
    maven_settings(tmp_path)
    roots: dict[str, Path] = {}
    for stage in STAGES:
        build_stage(stage, roots, tmp_path / "stages", env)
    image = roots["runtime"]
    assert not (image / "wheels").exists()  # the image keeps no wheels

    jar = image / AGENT_JAR.lstrip("/")
    assert jar.stat().st_mode & stat.S_IROTH
    with zipfile.ZipFile(jar) as archive:
        manifest = archive.read("META-INF/MANIFEST.MF").decode().splitlines()
        assignor = archive.read("dev/segue/kstreams/SegueTaskAssignor.class")
        names = archive.namelist()
    assert "Premain-Class: dev.segue.kstreams.Agent" in manifest  # a -javaagent
    # Class file major version: 44 + the Java release (61 for 17), so a Java 17 app loads it.
    release = int(pom("properties/maven.compiler.release"))
    assert int.from_bytes(assignor[6:8], "big") == 44 + release
    assert not any(n.startswith(("com/fasterxml/", "org/apache/kafka/")) for n in names)

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
