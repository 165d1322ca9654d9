"""The ``aimem`` command: status with no arguments, and one subcommand per store operation.

A thin shell: it parses arguments (``parser.py``), calls the public API and renders with
``aimem.render``. This module runs one command and turns every error into one line;
command bodies live in ``commands.py`` (``ingest.py``, ``status.py``, ``transfer.py``).
Only the module of the command that runs is imported, after parsing, so ``--help``,
``--version`` and usage errors never pay for the store, rich or pydantic.

Example:
    $ aimem save "User prefers Rust for systems work" --user-context syui
    $ aimem list
    $ aimem search Rust --namespace alice --json
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from aimem.cli.parser import JUDGING_COMMANDS, STATUS, build_parser

if TYPE_CHECKING:
    from rich.console import Console

    from aimem.cli.session import Session
    from aimem.exceptions import AmbiguousIdError

__all__ = ["main", "run"]

Handler = Callable[["Session", argparse.Namespace], int]


def _handler(name: str) -> Handler:
    """The function a ``"module:function"`` name in this package stands for."""
    module, _, function = name.partition(":")
    handler: Handler = getattr(importlib.import_module(f".{module}", __package__), function)
    return handler


def _error(err: Console, message: str) -> int:
    from rich.text import Text

    from aimem.cli.session import print_line

    print_line(err, Text.assemble(("error: ", "bold red"), message))
    return 1


def _not_found(args: argparse.Namespace, message: str) -> str:
    """The NotFoundError line: it names the id the user typed, as they typed it."""
    from aimem.ids import MIN_PREFIX

    memory_id = getattr(args, "memory_id", None)
    if memory_id is None:
        return message
    where = "" if args.namespace == "default" else f" in namespace {args.namespace!r}"
    if len(memory_id.strip()) < MIN_PREFIX:
        needs = f"an id prefix needs at least {MIN_PREFIX} characters"
        return f"no memory with id {memory_id!r}{where}: {needs}"
    return f"no memory with id {memory_id!r}{where} (see `aimem list --all`)"


def _ambiguous(exc: AmbiguousIdError) -> str:
    """The AmbiguousIdError line, short enough for a terminal (``aimem list`` shows the ids)."""
    many = "2" if exc.matches == 2 else "3+"
    return f"id prefix {exc.prefix!r} matches {many} memories: give more characters"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aimem`` command; returns the exit status.

    Example:
        >>> main(["list", "--namespace", "alice", "--json"])  # doctest: +SKIP
    """
    args = build_parser().parse_args(argv)
    from rich.console import Console

    from aimem.cli.session import Session

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    session = Session(
        args.database_url,
        args.namespace,
        Console(),
        Console(stderr=True),
        judges=args.command in JUDGING_COMMANDS,
        wide=getattr(args, "wide", False),
    )
    return run(session, args)


def run(session: Session, args: argparse.Namespace) -> int:
    """Run one parsed command in ``session``: its exit status, each error one message.

    ``aimem shell`` calls this once per line, with sessions that share open stores.
    """
    from aimem.cli.commands import CommandError
    from aimem.exceptions import AimemError, AmbiguousIdError, NotFoundError

    code = 1
    try:
        code = _handler(getattr(args, "handler", STATUS))(session, args)
    except NotFoundError as exc:
        return _error(session.err, _not_found(args, str(exc)))
    except AmbiguousIdError as exc:
        return _error(session.err, _ambiguous(exc) if exc.prefix else str(exc))
    except (AimemError, CommandError) as exc:
        return _error(session.err, str(exc))
    except OSError as exc:  # an input file that cannot be read
        detail = f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else exc
        return _error(session.err, str(detail))
    except KeyboardInterrupt:
        return 130
    finally:
        session.close()
    session.finish(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
