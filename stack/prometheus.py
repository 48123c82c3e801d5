"""Prometheus on the local stack: the pinned ``prometheus`` and ``promtool`` (built from
the Go module proxy by ``stack/install/prometheus.sh``, version in ``versions.env``).

``promtool`` unit-tests the chart's alert rules (tests/monitoring/test_alerts.py); the
server is what the monitoring e2e scrapes the operator and the app pods with.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from segue.stack.paths import cache_dir, read_versions
from segue.stack.process import ManagedProcess, StackError, free_port


def binary(name: str) -> Path:
    """``prometheus`` or ``promtool`` at the pinned version; StackError naming ``make
    stack`` when absent."""
    version = read_versions()["PROMETHEUS_VERSION"]
    found = cache_dir() / f"{name}-{version}" / "bin" / name
    if not found.exists():
        raise StackError(f"{name} is not installed (missing: {found}); run `make stack`")
    return found


class PrometheusServer:
    """One Prometheus on 127.0.0.1 (a free port), scraping what :meth:`targets` lists
    every ``scrape`` s (file-based discovery, re-read as the file changes) and evaluating
    ``rule_files`` every ``evaluate`` s. Its data lives in ``workdir``."""

    def __init__(
        self,
        workdir: Path,
        rule_files: list[Path],
        scrape: str = "1s",
        evaluate: str = "1s",
        host: str = "127.0.0.1",
    ) -> None:
        self.workdir, self.host = workdir, host
        self.port = free_port(host)
        self.targets_file = workdir / "targets.json"
        self.targets_file.write_text("[]")
        config = {
            "global": {"scrape_interval": scrape, "evaluation_interval": evaluate},
            "rule_files": [str(p) for p in rule_files],
            "scrape_configs": [
                {
                    "job_name": "segue",
                    "honor_labels": True,  # an app's namespace label is the app's
                    "file_sd_configs": [
                        {"files": [str(self.targets_file)], "refresh_interval": "1s"}
                    ],
                }
            ],
        }
        (workdir / "prometheus.yml").write_text(json.dumps(config, indent=1))
        self.process = ManagedProcess(
            "prometheus",
            [
                str(binary("prometheus")),
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address={host}:{self.port}",
            ],
            workdir / "prometheus.log",
        )

    def start(self, timeout: float = 60.0) -> None:
        self.process.start()
        self.process.wait_ready(self._ready, timeout, "its /-/ready")

    def stop(self) -> None:
        self.process.stop(grace=5)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def targets(self, groups: list[tuple[list[str], dict[str, str]]]) -> None:
        """Scrape these (addresses ``host:port``, their target labels), replacing the
        last list; written whole, then renamed, so Prometheus never reads half a file."""
        body = [{"targets": addresses, "labels": labels} for addresses, labels in groups]
        partial = self.targets_file.with_suffix(".tmp")
        partial.write_text(json.dumps(body))
        partial.replace(self.targets_file)

    def api(self, path: str, **params: str) -> Any:
        """``GET /api/v1/<path>``'s ``data``; StackError with Prometheus' own error."""
        query = urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as r:
                body = json.loads(r.read())
        except urllib.error.HTTPError as exc:
            body = json.loads(exc.read() or b"{}")
        if body.get("status") != "success":
            raise StackError(f"prometheus {path} {params}: {body.get('error', body)}")
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's result vector (or matrix, scalar: as Prometheus gives it)."""
        return list(self.api("query", query=expr)["result"])

    def alerts(self) -> list[dict[str, Any]]:
        """Every alert pending or firing now, with its labels, annotations and state."""
        return list(self.api("alerts")["alerts"])
