"""The ``aimem`` command: status with no arguments, and one subcommand per store operation.

A thin shell: it parses arguments (``parser.py``), calls the public API and renders with
``aimem.render``. This module runs one command and turns every error into one line;
command bodies live in ``commands.py`` (``ingest.py``, ``status.py``, ``transfer.py``).

Example:
    $ aimem save "User prefers Rust for systems work" --user-context syui
    $ aimem list
    $ aimem --namespace alice search Rust --json
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from ..exceptions import AimemError, NotFoundError
from .commands import CommandError, Session
from .parser import JUDGING_COMMANDS, Handler, build_parser
from .status import status

__all__ = ["main"]


def _error(err: Console, message: str) -> int:
    # soft_wrap: one line whatever the terminal width, so scripts can grep it.
    err.print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``aimem`` command; returns the exit status.

    Example:
        >>> main(["--namespace", "alice", "list", "--json"])  # doctest: +SKIP
    """
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    session = Session(
        args.database_url,
        args.namespace,
        Console(),
        Console(stderr=True),
        judges=args.command in JUDGING_COMMANDS,
    )
    handler: Handler = getattr(args, "handler", status)
    try:
        return handler(session, args)
    except NotFoundError as exc:
        memory_id = getattr(args, "memory_id", None)
        if memory_id is None:
            return _error(session.err, str(exc))
        return _error(
            session.err,
            f"no memory with id {memory_id!r} in namespace {args.namespace!r} "
            "(see `aimem list --all`)",
        )
    except (AimemError, CommandError) as exc:
        return _error(session.err, str(exc))
    except OSError as exc:  # an input file that cannot be read
        detail = f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else exc
        return _error(session.err, str(detail))
    except KeyboardInterrupt:
        return 130
    finally:
        session.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
