"""The suite's per-folder table files each test under its folder of ``tests/``."""

from __future__ import annotations

import pytest

from tests.timing import folder_of


@pytest.mark.parametrize(
    ("nodeid", "folder"),
    [
        ("tests/operator/test_e2e_scaling.py::test_scale[2-3]", "operator"),
        ("tests/faults/sub/test_x.py::test_y", "faults"),
        ("tests/test_layout.py::test_z", "."),
    ],
)
def test_each_test_is_filed_under_its_folder(nodeid: str, folder: str) -> None:
    assert folder_of(nodeid) == folder
