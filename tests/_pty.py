"""Run a command in a real pseudo-terminal of a given size and read what it printed.

stdout (and stdin) get one pty, stderr another, both sized rows x cols with
``TIOCSWINSZ``, so the program sees a terminal everywhere, as a user's shell gives it,
and the test can still tell the two streams apart. The output comes back with ANSI
escapes stripped and ``\\r\\n`` turned into ``\\n``.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["PtyRun", "display_width", "run_in_pty", "strip_ansi"]

# CSI (colours, cursor moves), OSC (titles, hyperlinks), and two-byte escapes.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[()][0-9A-Za-z]"
    r"|\x1b[=>78MDEHc]"
)


def strip_ansi(text: str) -> str:
    """``text`` without terminal escapes, with pty line ends (``\\r\\n``) as ``\\n``.

    A carriage return inside a line (a progress bar redrawing itself) keeps only what
    was drawn last on that line.
    """
    text = _ANSI.sub("", text).replace("\r\n", "\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def display_width(line: str) -> int:
    """Columns ``line`` takes in a terminal: East Asian wide and full-width count 2."""
    width = 0
    for char in line:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


@dataclass
class PtyRun:
    """One finished command: exit status and what it printed (escapes stripped)."""

    argv: list[str]
    code: int
    out: str
    err: str

    @property
    def out_lines(self) -> list[str]:
        return self.out.splitlines()

    @property
    def err_lines(self) -> list[str]:
        """stderr's non-blank lines."""
        return [line for line in self.err.splitlines() if line.strip()]

    def wider_than(self, cols: int) -> list[str]:
        """stdout lines wider than ``cols`` columns."""
        return [line for line in self.out_lines if display_width(line.rstrip()) > cols]

    def describe(self) -> str:
        command = " ".join(self.argv)
        return f"$ {command}\n[exit {self.code}]\n--stdout--\n{self.out}\n--stderr--\n{self.err}"


def _pty_pair(rows: int, cols: int) -> tuple[int, int]:
    master, slave = os.openpty()
    size = struct.pack("HHHH", rows, cols, 0, 0)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
    return master, slave


def run_in_pty(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    rows: int = 40,
    cols: int = 80,
    timeout: float = 120.0,
    cwd: str | None = None,
    typed: Sequence[str] = (),
    prompt: str | None = None,
) -> PtyRun:
    """Run ``argv`` with stdin/stdout on one ``rows`` x ``cols`` pty and stderr on another.

    ``typed`` is what a user types, piece by piece (``"list\\n"``; ``"\\x04"`` is
    Ctrl-D): each piece once stdout has shown ``prompt`` one more time, as a user waits
    for it (all at once without a prompt). The terminal echoes it into ``out``.
    """
    out_master, out_slave = _pty_pair(rows, cols)
    err_master, err_slave = _pty_pair(rows, cols)
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=out_slave,
            stdout=out_slave,
            stderr=err_slave,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(out_slave)
        os.close(err_slave)
    to_type = [piece.encode() for piece in typed]
    if prompt is None:
        for piece in to_type:
            os.write(out_master, piece)
        to_type = []
    chunks: dict[int, list[bytes]] = {out_master: [], err_master: []}
    open_fds = {out_master, err_master}
    deadline = time.monotonic() + timeout
    try:
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise TimeoutError(f"{' '.join(argv)} did not finish in {timeout} s")
            ready, _, _ = select.select(list(open_fds), [], [], min(left, 0.5))
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # EIO: every writer of the pty has closed it
                    data = b""
                if data:
                    chunks[fd].append(data)
                else:
                    open_fds.discard(fd)
                if to_type and fd == out_master and prompt is not None:
                    prompts = b"".join(chunks[fd]).count(prompt.encode())
                    if prompts > len(typed) - len(to_type):
                        os.write(out_master, to_type.pop(0))
            if not ready and proc.poll() is not None:
                # The program exited; drain what is left without blocking.
                for fd in list(open_fds):
                    while True:
                        more, _, _ = select.select([fd], [], [], 0.05)
                        if not more:
                            break
                        try:
                            data = os.read(fd, 65536)
                        except OSError:
                            data = b""
                        if not data:
                            break
                        chunks[fd].append(data)
                    open_fds.discard(fd)
        code = proc.wait(timeout=max(deadline - time.monotonic(), 1.0))
    finally:
        os.close(out_master)
        os.close(err_master)
    out = b"".join(chunks[out_master]).decode("utf-8", "replace")
    err = b"".join(chunks[err_master]).decode("utf-8", "replace")
    return PtyRun(list(argv), code, strip_ansi(out), strip_ansi(err))
