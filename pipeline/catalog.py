"""The policies ``segue simulate`` can replay, by readable name: Segue's sweep and the baselines.

A :class:`PolicySpec` is a name, a kind and its parameters: plain data that pickles to a
Spark executor, where :meth:`PolicySpec.controller` builds a fresh controller for each
run. Names are the user's vocabulary and a results column, so they are canonical:
``segue(warmups=4,standbys=0)`` always lists the two axes every Segue point has, then
``lag=`` and ``promotion=`` only where they differ from the operator's default
(``segue.operator.scaling.Policy``). :func:`parse` reads a ``--policies`` list:
``segue`` (the default sweep), a Segue point, ``eager``, ``kip441``, ``keda``,
``baselines`` (the three). docs/pipeline.md, "Spark".
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from segue.operator.scaling import Policy

from .policies.base import Controller
from .policies.eager import EagerController
from .policies.keda import KedaController
from .policies.kip441 import Kip441Controller
from .policies.segue import SegueController
from .sweep import sweep

Kind = Literal["segue", "eager", "kip441", "keda"]
BASELINES: tuple[Kind, ...] = ("eager", "kip441", "keda")
# short name in a policy's name -> the Policy field it sets, in naming order
AXES = {
    "warmups": "max_warmup_replicas",
    "standbys": "num_standby_replicas",
    "lag": "acceptable_recovery_lag",
    "promotion": "learner_promotion",
}
_ALWAYS_NAMED = ("warmups", "standbys")
_DEFAULT = Policy()


@dataclass(frozen=True)
class PolicySpec:
    """One policy to replay every scenario under; ``policy`` is set for Segue points only."""

    name: str
    kind: Kind
    policy: Policy | None = None

    def controller(self) -> Controller:
        """A fresh controller (they keep per-run state)."""
        if self.kind == "segue":
            return SegueController(self.policy or Policy())
        if self.kind == "eager":
            return EagerController()
        if self.kind == "kip441":
            return Kip441Controller()
        return KedaController()

    def params(self) -> dict[str, object]:
        """Every parameter the run used, for the results' ``params`` column."""
        if self.policy is not None:
            return asdict(self.policy)
        made = self.controller()
        return {name: getattr(made, name) for name in _SETTINGS[self.kind]}


# The baselines' settings (their other fields are per-run state)
_SETTINGS: dict[Kind, tuple[str, ...]] = {
    "segue": (),
    "eager": (),
    "kip441": ("acceptable_recovery_lag", "max_warmup_replicas", "probing_interval"),
    "keda": (
        "lag_threshold",
        "activation_lag_threshold",
        "min_replicas",
        "max_replicas",
        "polling_interval",
        "stabilization_window",
    ),
}


def segue_point(policy: Policy) -> PolicySpec:
    """The Segue sweep point ``policy``, under its canonical name."""
    parts = []
    for short, name in AXES.items():
        value = getattr(policy, name)
        if short in _ALWAYS_NAMED or value != getattr(_DEFAULT, name):
            parts.append(f"{short}={value}")
    return PolicySpec(f"segue({','.join(parts)})", "segue", policy)


def default_sweep() -> list[PolicySpec]:
    """Warm-ups x standbys, plus batch promotion and a looser recovery lag at the default.

    Small on purpose: every point is a full replay of the fleet (docs/pipeline.md).
    """
    grid = sweep(max_warmup_replicas=[1, 2, 4], num_standby_replicas=[0, 1])
    variants = sweep(learner_promotion=["batch"]) + sweep(acceptable_recovery_lag=[1_000_000])
    return [segue_point(p) for p in grid + variants]


def default() -> list[PolicySpec]:
    return [*default_sweep(), *(PolicySpec(k, k) for k in BASELINES)]


_POINT = re.compile(r"^segue\((?P<args>[^()]*)\)$")


def parse(text: str) -> list[PolicySpec]:
    """``"segue,eager"`` or ``"segue(warmups=4,standbys=1),kip441"``: the specs, in order.

    Raises ValueError naming what it could not read.
    """
    out: list[PolicySpec] = []
    for item in _split(text):
        if item == "segue":
            out += default_sweep()
        elif item == "baselines":
            out += [PolicySpec(k, k) for k in BASELINES]
        elif item in BASELINES:
            out.append(PolicySpec(item, item))
        elif m := _POINT.match(item):
            out.append(segue_point(_policy(m["args"], item)))
        else:
            known = "segue, segue(warmups=N,standbys=N,lag=N,promotion=eager|batch), "
            raise ValueError(f"unknown policy {item!r}: known are {known}{', '.join(BASELINES)}")
    names = [s.name for s in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"policies named twice: {', '.join(twice)}")
    if not out:
        raise ValueError("no policies given")
    return out


def _split(text: str) -> list[str]:
    """Split on the commas outside parentheses."""
    items, depth, current = [], 0, ""
    for ch in text.replace(" ", ""):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    return [i for i in [*items, current] if i]


def _policy(args: str, item: str) -> Policy:
    values: dict[str, Any] = {}
    for pair in filter(None, args.split(",")):
        key, _, raw = pair.partition("=")
        if key not in AXES or not raw:
            raise ValueError(f"{item}: expected {'|'.join(AXES)}=VALUE, got {pair!r}")
        if key == "promotion":
            if raw not in ("eager", "batch"):
                raise ValueError(f"{item}: promotion is eager or batch, not {raw!r}")
            values[AXES[key]] = raw
        elif raw.isdigit():
            values[AXES[key]] = int(raw)
        else:
            raise ValueError(f"{item}: {key} must be a whole number >= 0, not {raw!r}")
    return replace(Policy(), **values)
