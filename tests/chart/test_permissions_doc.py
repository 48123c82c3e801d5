"""The chart grants exactly what docs/install.md's "Permissions" tables say, no more and
no less: the tables are parsed and compared with the rules the chart renders, so a
rule added to the chart without its reason in the docs (or the reverse) fails here."""

from __future__ import annotations

import re
from typing import Any

from .helm import ROOT, only, render

Grant = tuple[str, str, str, bool]  # (API group, resource, verb, limited to names)


def documented() -> set[Grant]:
    text = (ROOT / "docs" / "install.md").read_text()
    section = text.split("## Permissions", 1)[1].split("\n## ", 1)[0]
    grants: set[Grant] = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("API group", "") or set(cells[0]) <= {"-"}:
            continue
        group = "" if cells[0] == "core" else cells[0].strip("`")
        named = "named" in cells[1]
        resources = re.findall(r"`([a-z/]+)`", cells[1])
        for resource in resources:
            for verb in (v.strip() for v in cells[2].split(",")):
                grants.add((group, resource, verb, named))
    return grants


def granted(objects: list[dict[str, Any]]) -> set[Grant]:
    grants: set[Grant] = set()
    for kind in ("ClusterRole", "Role"):
        for role in only(objects, kind):
            for rule in role["rules"]:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        for verb in rule["verbs"]:
                            named = bool(rule.get("resourceNames"))
                            grants.add((group, resource, verb, named))
    return grants


def test_the_chart_grants_what_the_docs_say_in_both_modes() -> None:
    wanted = documented()
    assert ("", "secrets", "get", False) in wanted  # the parser reads the tables
    assert granted(render()) == wanted
    assert granted(render({"watchNamespaces": ["a", "b"]})) == wanted


def test_a_grant_the_docs_do_not_give_is_noticed() -> None:
    objects = render()
    role = only(objects, "ClusterRole")[0]
    role["rules"].append({"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]})
    assert granted(objects) - documented() == {("", "nodes", "list", False)}
