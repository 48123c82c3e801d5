"""segue.protocol needs only the standard library and pydantic, and does no I/O: both
sides import it, so it must not pull either side's world in (import-linter holds the
same line; this is the allowlist)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import segue.protocol

NO_IO = {"socket", "ssl", "http", "urllib", "asyncio", "subprocess", "os", "shutil", "io"}


def test_protocol_imports_only_the_standard_library_and_pydantic() -> None:
    folder = Path(segue.protocol.__file__ or "").parent
    seen: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                seen.setdefault(name, set()).add(path.name)
    assert seen, "no imports found: the test reads the wrong folder"
    bad = {
        name: files
        for name, files in seen.items()
        if not (
            name == "pydantic"
            or name.startswith(("pydantic.", "segue.protocol"))
            or (name.split(".")[0] in sys.stdlib_module_names and name.split(".")[0] not in NO_IO)
        )
    }
    assert bad == {}
