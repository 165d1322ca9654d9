"""``aimem mcp`` under hostile or broken conditions, through the installed command.

HTTP: every bind checks ``Host`` and ``Origin`` (DNS rebinding), and the bearer header is
read the forgiving way RFC 9110 allows. Outside tool calls (``initialize``, resources),
a failure is the same one-line, secret-free error as a failed tool, and the details go
only to the server log.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from _stores import store_url
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

import aimem
from aimem.mcp.server import MAX_ERROR_CHARS

AIMEM = str(Path(sys.executable).with_name("aimem"))
SECRET = "vault-code-4242"
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AIMEM_"))}
    return env | extra


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def _serve_http(db: Path, *args: str) -> list[str]:
    return [AIMEM, "--database-url", store_url(db), "mcp", "--transport", "http", *args]


def _one_line(message: str) -> str:
    assert "\n" not in message and len(message) <= MAX_ERROR_CHARS, message
    for leak in ("Traceback", SECRET, "sqlite", "SELECT", "/tmp", str(Path.home())):
        assert leak not in message, message
    return message


# -- HTTP: Host, Origin and the bearer token ------------------------------------------


@dataclass
class Served:
    port: int
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text()


@contextmanager
def http_server(tmp_path: Path, host: str = "127.0.0.1", **env: str) -> Iterator[Served]:
    port = _free_port(host)
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    connect = "127.0.0.1" if host == "0.0.0.0" else host
    log_path = tmp_path / f"server-{port}.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            _serve_http(tmp_path / "m.db", "--host", host, "--port", str(port)),
            env=_env(**env),
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection((connect, port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(log_path.read_text()) from None
                time.sleep(0.05)
        yield Served(port, f"http://{authority}/mcp", log_path)
    finally:
        process.terminate()
        process.wait(timeout=10)


def _initialize() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"},
        },
    }


def _post(url: str, headers: dict[str, str] | Sequence[tuple[str, str]] = ()) -> httpx.Response:
    extra = list(headers.items()) if isinstance(headers, dict) else list(headers)
    return httpx.post(url, json=_initialize(), headers=[*ACCEPT.items(), *extra], timeout=10)


def _refused(response: httpx.Response, status: int, header: str) -> None:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": f"{header} header not allowed"}


async def _round_trip(url: str, headers: dict[str, str] | None = None) -> None:
    async with (
        httpx2.AsyncClient(headers=headers or {}) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        saved = await session.call_tool("save_memory", {"content": "Likes tea"})
        assert not saved.is_error, saved.content


def test_a_loopback_bind_other_than_127_0_0_1_refuses_foreign_host_and_origin(
    tmp_path: Path,
) -> None:
    with http_server(tmp_path, host="127.0.0.2") as served:
        p = served.port
        for host in (
            f"evil.example:{p}",
            "evil.example",
            f"127.0.0.2.evil.example:{p}",
            f"127.0.0.2:{p + 1}",
            "127.0.0.2",
            f"user@127.0.0.2:{p}",
            f"127.0.0.2:{p}/x",
            f"[::1]:{p}x",
        ):
            _refused(_post(served.url, {"Host": host}), 421, "Host")
        for origin in (
            "http://evil.example",
            f"http://evil.example:{p}",
            "null",
            f"http://127.0.0.2:{p + 1}",
            f"ftp://127.0.0.2:{p}",
            f"http://127.0.0.2:{p}/path",
            f"127.0.0.2:{p}",
        ):
            _refused(_post(served.url, {"Origin": origin}), 403, "Origin")
        for host in (f"127.0.0.2:{p}", f"localhost:{p}", f"LocalHost:{p}", f"127.0.0.1:{p}"):
            assert _post(served.url, {"Host": host}).status_code == 200, host
        for host in (f"[::1]:{p}", f"[0:0:0:0:0:0:0:1]:{p}", f"localhost.:{p}"):
            assert _post(served.url, {"Host": host}).status_code == 200, host
        for origin in (f"http://127.0.0.2:{p}", f"https://localhost:{p}", f"http://[::1]:{p}"):
            assert _post(served.url, {"Origin": origin}).status_code == 200, origin
        asyncio.run(_round_trip(served.url))
    log = served.log()
    assert "Host header" in log and "Origin header" in log
    assert "evil.example" not in log, "the refused value is not echoed into the log"


def test_the_default_bind_checks_the_port_of_host_and_origin(tmp_path: Path) -> None:
    with http_server(tmp_path) as served:
        p = served.port
        _refused(_post(served.url, {"Host": f"127.0.0.1:{p + 1}"}), 421, "Host")
        _refused(_post(served.url, {"Host": f"attacker.test:{p}"}), 421, "Host")
        _refused(_post(served.url, {"Origin": "http://localhost:3000"}), 403, "Origin")
        assert _post(served.url, {"Origin": f"http://localhost:{p}"}).status_code == 200


def test_an_ipv6_loopback_bind_checks_bracketed_hosts(tmp_path: Path) -> None:
    with http_server(tmp_path, host="::1") as served:
        p = served.port
        assert served.url == f"http://[::1]:{p}/mcp"
        _refused(_post(served.url, {"Host": f"evil.example:{p}"}), 421, "Host")
        _refused(_post(served.url, {"Host": f"::1:{p}"}), 421, "Host")
        _refused(_post(served.url, {"Origin": f"http://[::2]:{p}"}), 403, "Origin")
        for host in (f"[::1]:{p}", f"localhost:{p}", f"127.0.0.1:{p}"):
            assert _post(served.url, {"Host": host}).status_code == 200, host
        asyncio.run(_round_trip(served.url))


def test_a_wildcard_bind_needs_the_token_and_still_refuses_foreign_names(
    tmp_path: Path,
) -> None:
    token = {"Authorization": "Bearer s3cret"}
    with http_server(
        tmp_path,
        host="0.0.0.0",
        AIMEM_MCP_TOKEN="s3cret",
        AIMEM_MCP_ALLOWED_HOSTS=" mem.example , lan-box:8443,[fe80::1]",
    ) as served:
        p = served.port
        url = f"http://127.0.0.1:{p}/mcp"
        _refused(_post(url, token | {"Host": f"evil.example:{p}"}), 421, "Host")
        _refused(_post(url, {"Host": f"evil.example:{p}"}), 421, "Host")  # before the token
        assert _post(url, {"Host": f"localhost:{p}"}).status_code == 401
        # An IP literal cannot be a rebound name: any address of this machine works.
        for host in (f"192.0.2.7:{p}", f"[2001:db8::5]:{p}", f"localhost:{p}"):
            assert _post(url, token | {"Host": host}).status_code == 200, host
        _refused(_post(url, token | {"Host": f"192.0.2.7:{p + 1}"}), 421, "Host")
        # AIMEM_MCP_ALLOWED_HOSTS: a bare name on any port, host:port exactly.
        for host in ("mem.example", "MEM.example:9000", "lan-box:8443", "[fe80::1]:1"):
            assert _post(url, token | {"Host": host}).status_code == 200, host
        _refused(_post(url, token | {"Host": "lan-box:8444"}), 421, "Host")
        assert _post(url, token | {"Origin": "https://mem.example"}).status_code == 200
        _refused(_post(url, token | {"Origin": "https://lan-box"}), 403, "Origin")
        asyncio.run(_round_trip(url, token))


def test_allowed_hosts_add_a_dns_name_to_a_lan_style_bind(tmp_path: Path) -> None:
    with http_server(tmp_path, host="127.0.0.2", AIMEM_MCP_ALLOWED_HOSTS="memory.lan") as served:
        p = served.port
        assert _post(served.url, {"Host": f"memory.lan:{p}"}).status_code == 200
        assert _post(served.url, {"Origin": f"http://memory.lan:{p}"}).status_code == 200
        _refused(_post(served.url, {"Host": f"other.lan:{p}"}), 421, "Host")


def test_a_malformed_allowed_hosts_entry_is_refused_at_startup(tmp_path: Path) -> None:
    result = subprocess.run(
        _serve_http(tmp_path / "m.db", "--port", str(_free_port("127.0.0.1"))),
        env=_env(AIMEM_MCP_ALLOWED_HOSTS="good.example,bad host:x"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and "AIMEM_MCP_ALLOWED_HOSTS" in line
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not (tmp_path / "m.db").exists(), "refused before opening anything"


def test_the_bearer_scheme_is_case_insensitive_and_spaces_are_tolerated(tmp_path: Path) -> None:
    with http_server(tmp_path, AIMEM_MCP_TOKEN="s3cret") as served:
        for value in ("bearer s3cret", "BEARER   s3cret", "Bearer\ts3cret", "bEaReR \t s3cret"):
            assert _post(served.url, {"Authorization": value}).status_code == 200, value
        assert _post(served.url).status_code == 401
        for value in ("Bearer", "Basic s3cret", "Bearers3cret", "Bearer s3cret2", "Bearer s3 cret"):
            wrong = _post(served.url, {"Authorization": value})
            assert wrong.status_code == 403, value
            assert "s3cret" not in wrong.text
        twice = [("Authorization", "Bearer nope"), ("Authorization", "Bearer s3cret")]
        assert _post(served.url, twice).status_code == 403
        asyncio.run(_round_trip(served.url, {"Authorization": "bearer  s3cret"}))


# -- stdio: initialize and resources --------------------------------------------------


@asynccontextmanager
async def stdio_session(db: Path, log: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=AIMEM, args=["--database-url", store_url(db), "mcp"], env=_env()
    )
    with log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            yield session


def _store_with_one_memory(db: Path) -> str:
    with aimem.MemoryStore(
        store_url(db), judge=aimem.HeuristicJudge(), min_priority_score=0
    ) as store:
        store.set_core("You are Ai.")
        memory = store.save(f"The {SECRET} opens the safe", user_context=SECRET)
        return memory.id


def _corrupt(db: Path, column: str, value: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE memories SET {column} = ?", (value,))
    conn.close()


@pytest.mark.sqlite_only
@pytest.mark.parametrize(("column", "value"), [("created_at", SECRET), ("priority_score", "x")])
def test_a_failing_initialize_is_a_one_line_error_and_details_go_to_the_log(
    tmp_path: Path, column: str, value: str
) -> None:
    db, log = tmp_path / "m.db", tmp_path / "server.log"
    _store_with_one_memory(db)
    _corrupt(db, column, value)

    async def scenario() -> MCPError:
        async with stdio_session(db, log) as session:
            with pytest.raises(MCPError) as failed:
                await session.initialize()
            return failed.value

    error = asyncio.run(scenario())
    assert error.code == INTERNAL_ERROR
    message = _one_line(error.message)
    assert message.startswith("initialize: ") and "server log" in message
    assert "parameters" not in message and "isoformat" not in message
    assert "Traceback" in log.read_text(), "the full exception is in the server log"


def test_resource_errors_are_one_line_and_log_no_traceback(tmp_path: Path) -> None:
    db, log = tmp_path / "m.db", tmp_path / "server.log"
    memory_id = _store_with_one_memory(db)

    async def scenario() -> None:
        async with stdio_session(db, log) as session:
            await session.initialize()
            [core] = (await session.read_resource("memory://core")).contents
            assert core.text == "You are Ai."
            [listing] = (await session.read_resource("memory://memories")).contents
            assert [m["id"] for m in json.loads(listing.text)] == [memory_id]
            [one] = (await session.read_resource(f"memory://memories/{memory_id}")).contents
            assert json.loads(one.text)["id"] == memory_id
            for uri, expected in (
                ("memory://memories/", "memory id"),
                ("memory://memories/nope", "No memory with id 'nope'"),
                ("memory://memories/" + "x" * 5000, "memory id"),
                ("memory://memories/%20", "memory_id must be a non-empty str"),
                ("memory://memories/a/b", "Unknown resource"),
                ("memory://elsewhere", "Unknown resource"),
            ):
                with pytest.raises(MCPError) as failed:
                    await session.read_resource(uri)
                assert failed.value.code == INVALID_PARAMS, (uri, failed.value.message)
                assert expected in _one_line(failed.value.message), (uri, failed.value.message)
            stats = await session.call_tool("memory_stats", {})
            assert not stats.is_error, "the session keeps working"

    asyncio.run(scenario())
    assert "Traceback" not in log.read_text()


@pytest.mark.sqlite_only
def test_a_crashing_resource_or_tool_is_one_line_with_details_only_in_the_log(
    tmp_path: Path,
) -> None:
    db, log = tmp_path / "m.db", tmp_path / "server.log"
    memory_id = _store_with_one_memory(db)

    async def scenario() -> None:
        async with stdio_session(db, log) as session:
            await session.initialize()
            _corrupt(db, "priority_score", "x")
            for uri in ("memory://memories", f"memory://memories/{memory_id}"):
                with pytest.raises(MCPError) as failed:
                    await session.read_resource(uri)
                assert failed.value.code == INTERNAL_ERROR
                message = _one_line(failed.value.message)
                assert message.startswith(f"{uri}: ") and "server log" in message
            listed = await session.call_tool("list_memories", {})
            assert listed.is_error
            [block] = listed.content
            message = _one_line(block.text)
            assert "invalid arguments" not in message, "the caller's arguments were fine"
            assert message.startswith("list_memories: ") and "server log" in message
            [core] = (await session.read_resource("memory://core")).contents
            assert core.text == "You are Ai.", "the session keeps working"

    asyncio.run(scenario())
    assert "Traceback" in log.read_text()
