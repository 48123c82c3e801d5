"""``segue assign [FILE|-]``: preview a placement decision, JSON in, JSON out.

Reads an :class:`~.model.AssignRequest` (issue 3's field names), prints the
:class:`~.model.Decision`. Exit 0 on success; bad input exits 2 with the offending item named
on stderr. Heavy imports (pydantic, the solver) wait until :func:`run`, so ``segue --help``
stays fast.
"""

from __future__ import annotations

import argparse
import sys

HELP = "preview a placement decision: JSON in, JSON out"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", nargs="?", default="-", help="request JSON file, or - for standard input"
    )
    parser.add_argument(
        "--indent", type=int, default=None, help="pretty-print the output with this indent"
    )


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from .errors import AssignorError
    from .model import AssignRequest
    from .solve import assign

    try:
        if args.file == "-":
            text = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as handle:
                text = handle.read()
    except OSError as error:
        print(f"segue assign: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 2
    try:
        decision = assign(AssignRequest.model_validate_json(text))
    except ValidationError as error:
        print("segue assign: invalid request:", file=sys.stderr)
        for problem in error.errors(include_url=False):
            where = ".".join(str(part) for part in problem["loc"]) or "(root)"
            shown = "" if problem["type"] == "missing" else f" (got {problem['input']!r})"
            print(f"  {where}: {problem['msg']}{shown}", file=sys.stderr)
        return 2
    except AssignorError as error:
        print(f"segue assign: invalid request: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(decision.model_dump_json(indent=args.indent))
    sys.stdout.write("\n")
    return 0
