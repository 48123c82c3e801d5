"""The local stack's command-line pieces that need no running stack: ``segue stack
demo``'s options with every flag left out (issue 23: ``--workdir`` left out crashed the
show), the kubectl config ``segue stack up`` merges into and takes back out, and the
"image" environment that lets a pod find this project's ``segue`` and its agent jar."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from segue.cli import build_parser
from segue.operator.image import KSTREAMS_AGENT_JAR_ENV
from segue.stack import KafkaCluster, LocalStack, kubecontext
from segue.stack.cli import demo_options
from segue.stack.demo import steps
from segue.stack.demo.show import Options
from segue.stack.kubelet.image import image_env
from segue.stack.kubelet.podspec import process_env
from segue.stack.paths import KSTREAMS_JAR


def test_the_demo_with_no_flag_is_the_full_show() -> None:
    options = demo_options(build_parser().parse_args(["stack", "demo"]))
    assert options == Options()
    assert options.workdir is None
    assert options.report == Path("demo-report")
    assert [str(s) for s in options.steps] == list(steps.FULL)


def test_quick_changes_only_what_it_says_and_a_flag_wins() -> None:
    quick = demo_options(build_parser().parse_args(["stack", "demo", "--quick"]))
    assert [str(s) for s in quick.steps] == list(steps.QUICK)
    assert (quick.prefill, quick.workdir, quick.rate) == (20_000, None, Options().rate)
    given = demo_options(
        build_parser().parse_args(["stack", "demo", "--quick", "--prefill", "5", "--plain"])
    )
    assert (given.prefill, given.live) == (5, False)


def test_one_broker_unless_three_are_asked_for() -> None:
    parse = build_parser().parse_args
    assert demo_options(parse(["stack", "demo"])).brokers == 1
    assert demo_options(parse(["stack", "demo", "--brokers", "3"])).brokers == 3
    assert demo_options(parse(["stack", "demo", "--quick", "--brokers", "3"])).brokers == 3
    assert parse(["stack", "up"]).brokers == 1
    assert parse(["stack", "up", "--brokers", "3"]).brokers == 3


@pytest.mark.parametrize("count", ["2", "0", "three", "5"])
def test_a_cluster_of_other_sizes_is_refused_naming_the_value(
    count: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["stack", "up", "--brokers", count])
    assert f"--brokers {count!r}: 1 or 3" in capsys.readouterr().err


def test_a_stack_of_three_brokers_is_one_replicated_cluster(tmp_path: Path) -> None:
    stack = LocalStack(tmp_path, with_kube=False, brokers=3)
    assert isinstance(stack.kafka, KafkaCluster)
    nodes = stack.kafka.nodes
    assert [n.node_id for n in nodes] == [1, 2, 3]
    assert len({n.cluster_id for n in nodes}) == 1
    voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in nodes)
    assert all(n.voters == voters for n in nodes)
    assert [(n.replication, n.min_insync) for n in nodes] == [(3, 2)] * 3
    assert stack.kafka.bootstrap_servers.count(",") == 2
    assert "3 brokers, replication factor 3, min.insync.replicas 2" in stack.describe()


def admin(tmp_path: Path) -> Path:
    path = tmp_path / "admin.kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "x", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "segue-admin", "user": {"client-key": "k"}}],
                "contexts": [{"name": "x", "context": {"cluster": "x", "user": "segue-admin"}}],
                "current-context": "x",
            }
        )
    )
    return path


def test_the_context_goes_in_current_and_comes_out_leaving_the_rest(tmp_path: Path) -> None:
    config = tmp_path / "kube" / "config"
    config.parent.mkdir()
    mine = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "prod", "cluster": {"server": "https://prod"}}],
        "users": [{"name": "me", "user": {"token": "t"}}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "me"}}],
        "current-context": "prod",
    }
    config.write_text(yaml.safe_dump(mine))
    merged = kubecontext.merge(config, admin(tmp_path))
    during = yaml.safe_load(config.read_text())
    assert during["current-context"] == kubecontext.CONTEXT
    assert [c["name"] for c in during["contexts"]] == ["prod", kubecontext.CONTEXT]
    ours = during["contexts"][1]["context"]
    assert ours == {"cluster": kubecontext.CONTEXT, "user": kubecontext.CONTEXT}
    assert during["users"][1]["user"] == {"client-key": "k"}
    assert oct(config.stat().st_mode & 0o777) == "0o600"
    kubecontext.unmerge(merged)
    assert yaml.safe_load(config.read_text()) == mine


def test_a_config_made_for_the_stack_is_removed_with_it(tmp_path: Path) -> None:
    config = tmp_path / "home" / ".kube" / "config"
    merged = kubecontext.merge(config, admin(tmp_path))
    assert yaml.safe_load(config.read_text())["current-context"] == kubecontext.CONTEXT
    kubecontext.unmerge(merged)
    assert not config.exists()


def test_kubectl_config_is_the_first_of_kubeconfig_else_home(tmp_path: Path) -> None:
    env = {"KUBECONFIG": f"{tmp_path}/a{os.pathsep}{tmp_path}/b"}
    assert kubecontext.kubectl_config(env) == tmp_path / "a"
    assert kubecontext.kubectl_config({}) == Path.home() / ".kube" / "config"


def test_the_image_puts_this_python_first_on_the_path() -> None:
    env = image_env({"PATH": "/usr/bin:/venv/bin:/bin", "LANG": "C"}, "/venv/bin/python")
    assert env["PATH"] == "/venv/bin:/usr/bin:/bin"
    assert env["LANG"] == "C"
    assert image_env({}, "/v/bin/python")["PATH"].split(os.pathsep)[0] == "/v/bin"


def test_the_image_names_the_agent_jar_make_builds_and_every_container_gets_it() -> None:
    env = image_env({"PATH": "/bin"}, "/venv/bin/python")
    assert env[KSTREAMS_AGENT_JAR_ENV] == str(KSTREAMS_JAR)
    assert KSTREAMS_JAR.parent.parent == Path(__file__).resolve().parents[2] / "kstreams"
    mine = image_env({KSTREAMS_AGENT_JAR_ENV: "/mine.jar"}, "/venv/bin/python")
    assert mine[KSTREAMS_AGENT_JAR_ENV] == "/mine.jar"  # the runner's own wins
    seen = process_env(env, {}, pod_root=Path("/r"), home=Path("/h"), hostname="p-0")
    assert seen[KSTREAMS_AGENT_JAR_ENV] == str(KSTREAMS_JAR)
