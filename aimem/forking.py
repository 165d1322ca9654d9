"""Starting afresh in a process made by ``fork()`` (multiprocessing, gunicorn, Celery).

A forked child keeps only the thread that forked. It inherits every lock as it was, even
one a vanished thread held, and the parent's sockets and files. Using them hangs or
corrupts, so whatever holds them registers here. In the child, before anything else
runs, the hooks run and then each live object's ``_after_fork()``: each drops what it
inherited (unclosed: it is the parent's) and opens its own on first use.
``os.register_at_fork`` runs them. A pid check (``renew_if_forked``) catches a fork
made without Python's hooks (uWSGI without ``py-call-osafterfork``).

Some locks are out of Python's reach: SQLite's own C mutexes, held for a moment inside
any call. A child forked while another thread is in one waits forever for it. So
database work runs inside ``guard()``, and a fork first waits for the work in flight to
end, up to ``DRAIN`` seconds. A call that takes longer is most likely asleep waiting for
a database lock, holding no C mutex: then the fork goes ahead.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

__all__ = ["DRAIN", "Renewable", "at_fork", "guard", "keep", "renew_after_fork", "renew_if_forked"]

log = logging.getLogger("aimem")

#: Seconds a fork waits for the database work in flight to end.
DRAIN = 2.0


class Renewable(Protocol):
    """An object that holds something a forked child must not share."""

    def _after_fork(self) -> None:
        """In the child: drop what was inherited; open anew on first use."""


class _Gate:
    """Database work in flight, and a fork waiting for it to end before it starts."""

    def __init__(self) -> None:
        self.cond = threading.Condition(threading.Lock())
        self.busy = 0
        self.forking = False

    def before_fork(self) -> None:
        self.cond.acquire()  # held through the fork: no work starts meanwhile
        self.forking = True
        self.cond.wait_for(lambda: self.busy == 0, timeout=DRAIN)

    def after_fork_in_parent(self) -> None:
        self.forking = False
        self.cond.notify_all()
        self.cond.release()


_hooks: list[Callable[[], None]] = []
_live: weakref.WeakSet[Renewable] = weakref.WeakSet()
_pid = os.getpid()
_gate = _Gate()
#: What a child inherited and put aside: collecting it could close the parent's sockets.
_kept: list[object] = []


@contextmanager
def guard() -> Iterator[None]:
    """Database work: a fork waits for it to end (a while), and it waits for a fork."""
    gate = _gate
    with gate.cond:
        while gate.forking:
            gate.cond.wait()
        gate.busy += 1
    try:
        yield
    finally:
        with gate.cond:
            gate.busy -= 1
            if gate.busy == 0:
                gate.cond.notify_all()


def at_fork(hook: Callable[[], None]) -> None:
    """Run ``hook`` in every child forked from now on (module state: a loop, a lock)."""
    _hooks.append(hook)


def renew_after_fork(obj: Renewable) -> None:
    """Call ``obj._after_fork()`` in every child forked while ``obj`` lives (held weakly)."""
    _live.add(obj)


def keep(obj: object) -> None:
    """Keep ``obj`` for the child's life, never collected: it holds the parent's handles.

    Collecting it may close them (pysqlite does), or send a goodbye on a shared socket.
    """
    _kept.append(obj)


def renew_if_forked() -> None:
    """Renew now if this process was forked without Python's fork hooks running."""
    if os.getpid() != _pid:
        _in_child()


def _before_fork() -> None:
    _gate.before_fork()


def _after_fork_in_parent() -> None:
    _gate.after_fork_in_parent()


def _in_child() -> None:
    global _pid, _gate
    if os.getpid() == _pid:  # the hooks ran already
        return
    _pid, _gate = os.getpid(), _Gate()
    for hook in [*_hooks, *(obj._after_fork for obj in list(_live))]:
        try:
            hook()
        except Exception:  # one failure must not leave the others inherited
            log.exception("aimem: could not start afresh after fork")


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(
        before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_in_child
    )
