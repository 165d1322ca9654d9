"""Run coroutines from synchronous code, even inside a running event loop (Jupyter).

``asyncio.run`` refuses to start while a loop is running, and nesting loops breaks
libraries; instead one private loop lives in a daemon thread and sync callers wait
on futures submitted to it. The same loop serves every sync store in the process,
so async clients (httpx connection pools) always stay on the loop that made them;
database calls leave it for each store's own threads (``store.py``), so one
store's lock wait never holds up another's work.

A child forked after the loop started has no loop thread (only the forking thread
survives), so waiting on it would hang forever: the child forgets it and starts a
loop, thread and lock of its own on first use (``forking.py``).
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from aimem.exceptions import AimemError
from aimem.forking import at_fork, keep, renew_if_forked

__all__ = ["on_sync_loop", "run_sync"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="aimem-sync-loop", daemon=True)
            thread.start()
            _loop, _thread = loop, thread
            atexit.register(_shutdown)
        return _loop


def _shutdown() -> None:
    global _loop
    with _lock:
        loop, _loop = _loop, None
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)
        if _thread is not None:
            _thread.join(timeout=5)
        if not loop.is_running():
            loop.close()


def _forget_parent_loop() -> None:
    """In a forked child: the loop's thread is gone and the lock may be held by it."""
    global _lock, _loop, _thread
    if _loop is not None:
        keep(_loop)  # its selector and self-pipe are the parent's: never closed here
    _lock, _loop, _thread = threading.Lock(), None, None


at_fork(_forget_parent_loop)


def on_sync_loop() -> bool:
    """True when called from aimem's own background loop (a sync store's call)."""
    return threading.current_thread() is _thread


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on aimem's background loop and return its result (or raise its error)."""
    renew_if_forked()
    loop = _background_loop()
    if on_sync_loop():
        coro.close()
        raise AimemError(
            "A synchronous aimem store was called from aimem's own event loop (for example "
            "from an on_archive callback): use AsyncMemoryStore there instead."
        )
    return asyncio.run_coroutine_threadsafe(coro, loop).result()
