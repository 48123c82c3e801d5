"""Every code block of README.md is run, line by line as written, by a test of this folder
(readme.RUN_BY names which): a block added without one fails here."""

from __future__ import annotations

from pathlib import Path

from .readme import RUN_BY, blocks

HERE = Path(__file__).parent


def test_every_block_is_run_by_a_test() -> None:
    found = {section: len(code) for section, code in blocks().items()}
    assert found == {section: len(modules) for section, modules in RUN_BY.items()}
    for modules in RUN_BY.values():
        for module in modules:
            assert (HERE / f"{module}.py").exists(), module


def test_the_setup_commands_are_the_first_block() -> None:
    assert [line.split("#")[0].strip() for line in blocks()["Two commands"][0]] == [
        "make demo",
        "make test",
    ]
