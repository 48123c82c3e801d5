"""A package's exported names, each loaded from its module on first use (PEP 562).

``segue --help`` builds every subcommand's parser, so a package that a subcommand's
module imports must not load its heavy parts (numpy, OR-tools, pydantic, YAML) until a
name is asked for: ``__getattr__ = exports(__name__, {"module": ("Name", ...)})``.
Type checkers read the package's ``TYPE_CHECKING`` imports instead. It lives in the
contract, the one leaf every part of Segue may import, and needs only the standard
library.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping


def exports(package: str, parts: Mapping[str, Iterable[str]]) -> Callable[[str], object]:
    """``package``'s module ``__getattr__`` for ``parts`` (submodule -> its names): the
    name's value, imported once and then kept in the package's namespace."""
    homes = {name: part for part, names in parts.items() for name in names}
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> object:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        namespace[name] = value  # looked up once
        return value

    return __getattr__
