"""``aimem`` errors are one line on stderr and exit 1 (2 for usage), never a traceback.

Run through the installed console script, as a user or an MCP client config runs it;
most cases are ``aimem mcp``, whose store is opened inside the server's event loop.
"""

from __future__ import annotations

import asyncio
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _stores import store_url
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

AIMEM = str(Path(sys.executable).with_name("aimem"))
BAD_URLS = ["not a url", "postgresql+nosuchdriver://x"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    return env | {"COLUMNS": "80"} | extra


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [AIMEM, *args],
        env=env or _env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line of a failed run (exit 1, nothing on stdout)."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize("port", ["99999", "0", "-1", "65536"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_out_of_range_port_is_a_one_line_error(
    tmp_path: Path, port: str, transport: str
) -> None:
    db = tmp_path / "m.db"
    result = _run("--database-url", store_url(db), "mcp", "--transport", transport, "--port", port)
    line = _one_error_line(result)
    assert "1 to 65535" in line and port in line
    assert not db.exists(), "refused before opening anything"


def test_a_non_integer_port_stays_a_usage_error(tmp_path: Path) -> None:
    result = _run("--database-url", store_url(tmp_path / "m.db"), "mcp", "--port", "abc")
    assert result.returncode == 2
    assert "usage:" in result.stderr and "Traceback" not in result.stderr


def test_a_port_in_use_is_a_one_line_error(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _run(
            "--database-url", store_url(db), "mcp", "--transport", "http", "--port", str(port)
        )
    line = _one_error_line(result)
    assert f"127.0.0.1:{port}" in line and "already in use" in line
    assert not db.exists(), "refused before opening anything"


def test_an_unusable_host_is_a_one_line_error(tmp_path: Path) -> None:
    result = _run(
        "--database-url",
        store_url(tmp_path / "m.db"),
        "mcp",
        "--transport",
        "http",
        "--host",
        "not a host",
        env=_env(AIMEM_MCP_TOKEN="t"),
    )
    assert "not a host name" in _one_error_line(result)


@contextmanager
def _listening(db: Path, host: str) -> Iterator[tuple[subprocess.Popen[str], int, str]]:
    port = _free_port(host)
    command = [AIMEM, "--database-url", store_url(db), "mcp", "--transport", "http"]
    process = subprocess.Popen(
        [*command, "--host", host, "--port", str(port)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    try:
        readable, _, _ = select.select([process.stdout], [], [], 30)
        assert readable, "no line on stdout within 30 s"
        yield process, port, process.stdout.readline()
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()


async def _works(url: str) -> None:
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        assert (await session.call_tool("memory_stats", {})).is_error is False


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_http_prints_one_line_saying_where_it_listens(tmp_path: Path, host: str) -> None:
    with _listening(tmp_path / "m.db", host) as (process, port, line):
        authority = f"[{host}]" if ":" in host else host
        url = f"http://{authority}:{port}/mcp"
        assert line == f"aimem MCP server listening on {url}\n"
        asyncio.run(_works(url))  # the line is printed once the socket listens
        process.terminate()
        assert process.stdout is not None
        rest, _ = process.communicate(timeout=10)
    assert rest == "", "nothing else on stdout"


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize(
    "command", [["list"], ["stats"], ["show", "x"], ["save", "x"], ["mcp"], ["mcp", "http"]]
)
def test_a_bad_database_url_is_the_stores_one_line_error(url: str, command: list[str]) -> None:
    """Depends on the store raising StorageError/ValidationError for such URLs."""
    if command == ["mcp", "http"]:
        command = ["mcp", "--transport", "http", "--port", str(_free_port())]
    # An OpenAI setting (never called: the store fails first) keeps the warning about
    # judging offline out of stderr, so the error line is the only line.
    env = _env(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    line = _one_error_line(_run("--database-url", url, *command, env=env))
    assert "internal error" not in line, "the store's own message, naming the fix"


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(
    ("database_url", "openai_base_url"),
    [
        ("not a url", "http://127.0.0.1:9/v1"),
        # httpx rejects this base URL with its own exception type while the judge is built.
        ("{store}", ":::"),
    ],
)
def test_mcp_startup_never_ends_in_a_traceback(
    tmp_path: Path, transport: str, database_url: str, openai_base_url: str
) -> None:
    env = _env(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=openai_base_url)
    args = ["--transport", transport, "--port", str(_free_port())]
    url = database_url.format(store=store_url(tmp_path / "m.db"))
    _one_error_line(_run("--database-url", url, "mcp", *args, env=env))
