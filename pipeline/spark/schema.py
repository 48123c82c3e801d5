"""Explicit Spark schemas for the output rows, read off their dataclasses.

:class:`~segue.pipeline.rows.Result` and :class:`~segue.pipeline.rows.Failure` are the
one home of the columns; this turns their annotations into a ``StructType`` (``str`` is
a string, ``int`` a long, ``float`` a double, ``X | None`` nullable, ``list[...]`` an
array), so Spark never infers a type from the first rows it sees.
"""

from __future__ import annotations

import types
import typing
from dataclasses import astuple, fields
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    DataType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from segue.pipeline.rows import Failure, Result

_PLAIN: dict[object, DataType] = {str: StringType(), int: LongType(), float: DoubleType()}


def struct(cls: type) -> StructType:
    hints = typing.get_type_hints(cls)
    return StructType([_field(f.name, hints[f.name]) for f in fields(cls)])


def _field(name: str, hint: Any) -> StructField:
    spark, nullable = _type(hint)
    return StructField(name, spark, nullable)


def _type(hint: Any) -> tuple[DataType, bool]:
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) and type(None) in args:
        (inner,) = (a for a in args if a is not type(None))
        return _type(inner)[0], True
    if typing.get_origin(hint) is list:
        element, nullable = _type(args[0])
        return ArrayType(element, nullable), False
    return _PLAIN[hint], False


def row(x: Result | Failure) -> tuple[Any, ...]:
    return astuple(x)


RESULTS = struct(Result)
FAILURES = struct(Failure)
