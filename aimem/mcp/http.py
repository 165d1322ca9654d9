"""The MCP server's HTTP transport: where it listens and which requests it serves.

HTTP guards, outermost first:

- ``HostGuard`` (DNS rebinding): ``Host`` must name this bind: the bound host and port
  (IPv6 in brackets), plus ``127.0.0.1``, ``localhost`` and ``[::1]`` on that port for a
  loopback bind. A wildcard bind (``0.0.0.0``, ``::``) has no one name, so it accepts
  the loopback names and any IP literal on its port (a rebound *name* is what the attack
  needs) and requires the token. ``AIMEM_MCP_ALLOWED_HOSTS`` (comma-separated
  ``host[:port]``; no port means any port) adds names, e.g. a DNS name in front of a LAN
  bind. An ``Origin``, when sent, must be ``http(s)://`` one of the same host:ports.
  Refusals are 421 (Host) and 403 (Origin).
- ``BearerTokenGuard``: with ``AIMEM_MCP_TOKEN`` set (required off loopback), every
  request needs ``Authorization: Bearer <token>`` (scheme in any case); 401 when
  missing, 403 when wrong.
"""

import errno
import hmac
import ipaddress
import json
import logging
import os
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from aimem.exceptions import ValidationError

__all__ = [
    "ALLOWED_HOSTS_ENV",
    "HTTP_PATH",
    "MAX_ERROR_CHARS",
    "TOKEN_ENV",
    "BearerTokenGuard",
    "HostGuard",
    "HostPolicy",
    "check_port",
    "http_token",
    "http_url",
    "is_loopback",
    "listen",
    "one_line",
    "serve_http",
]

log = logging.getLogger("aimem.mcp")

TOKEN_ENV = "AIMEM_MCP_TOKEN"
ALLOWED_HOSTS_ENV = "AIMEM_MCP_ALLOWED_HOSTS"
HTTP_PATH = "/mcp"
#: Every error a caller sees is one line of at most this many characters.
MAX_ERROR_CHARS = 300


def one_line(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Collapse whitespace and cut to ``limit`` characters: errors are one short line."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


#: Names a loopback (or wildcard) bind answers to besides its own address.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._")

#: ``(host, port)`` as compared; a port of None (from AIMEM_MCP_ALLOWED_HOSTS) is any port.
Authority = tuple[str, int | None]


def _host_name(text: str) -> str | None:
    """A host as compared: lower case, no trailing dot, IPs canonical; None if malformed."""
    if text.startswith("[") and text.endswith("]"):
        try:
            return str(ipaddress.IPv6Address(text[1:-1]))
        except ValueError:
            return None
    name = text.lower().removesuffix(".")
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name if name and set(name) <= _NAME_CHARS else None


def _authority(text: str) -> Authority | None:
    """Split ``host[:port]`` (IPv6 in brackets); None when malformed."""
    host, digits = text, None
    if text.startswith("["):
        end = text.find("]") + 1
        host, rest = text[:end], text[end:]
        if not end or (rest and not rest.startswith(":")):
            return None
        digits = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, digits = text.split(":")
    name = _host_name(host)
    if name is None:
        return None
    if digits is None:
        return name, None
    if not (digits.isascii() and digits.isdigit() and 0 < int(digits) < 65536):
        return None
    return name, int(digits)


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses: the only binds allowed without a token."""
    name = _host_name(host) or ""
    address = _ip(name)
    return name == "localhost" or (address is not None and address.is_loopback)


@dataclass(frozen=True)
class HostPolicy:
    """The ``Host`` and ``Origin`` values one bind answers to (rules in the module docstring)."""

    port: int
    names: frozenset[Authority]
    any_ip: bool = False

    @classmethod
    def for_bind(
        cls, host: str, port: int, environ: MutableMapping[str, str] | None = None
    ) -> "HostPolicy":
        """The policy for a bind, with the names ``AIMEM_MCP_ALLOWED_HOSTS`` adds.

        Raises:
            ValidationError: the host or an AIMEM_MCP_ALLOWED_HOSTS entry is malformed.
        """
        env = os.environ if environ is None else environ
        bound = _host_name(host)
        if bound is None:
            raise ValidationError(f"host {host!r} is not a host name or IP address")
        wildcard = bound in WILDCARD_HOSTS
        names: set[Authority] = {(bound, port)}
        if wildcard or is_loopback(bound):
            names.update((name, port) for name in LOOPBACK_NAMES)
        for entry in (e.strip() for e in env.get(ALLOWED_HOSTS_ENV, "").split(",")):
            extra = _authority(entry) if entry else None
            if entry and extra is None:
                raise ValidationError(
                    f"{ALLOWED_HOSTS_ENV}: {one_line(entry, 80)!r} is not host[:port] "
                    "(separate several with commas)"
                )
            if extra is not None:
                names.add(extra)
        return cls(port, frozenset(names), any_ip=wildcard)

    def allows(self, authority: Authority | None, default_port: int) -> bool:
        """Whether ``authority`` (its port defaulting to ``default_port``) names this bind."""
        if authority is None:
            return False
        name, port = authority[0], default_port if authority[1] is None else authority[1]
        if (name, port) in self.names or (name, None) in self.names:
            return True
        # An IP literal cannot be a rebound name, and a wildcard bind has no one name.
        return self.any_ip and port == self.port and _ip(name) is not None

    def allows_host(self, value: str) -> bool:
        """Check a ``Host`` header (no port means 80)."""
        return self.allows(_authority(value), 80)

    def allows_origin(self, value: str) -> bool:
        """Check an ``Origin`` header: ``http(s)://host[:port]``, nothing else (not ``null``)."""
        scheme, sep, rest = value.partition("://")
        default = _DEFAULT_PORTS.get(scheme.lower()) if sep else None
        return default is not None and self.allows(_authority(rest), default)


Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]


def _headers(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope.get("headers", []) if key.lower() == name]


async def _refuse(send: Send, status: int, message: str, *extra: tuple[bytes, bytes]) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(body)),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class HostGuard:
    """ASGI wrapper: refuse requests whose ``Host`` or ``Origin`` does not name this bind.

    Our own check rather than the SDK's, which is on only for three default host names.
    """

    def __init__(self, app: Any, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, or refuse it when its Host or Origin names another site."""
        if scope["type"] == "http":
            refused = self._refusal(scope)
            if refused is not None:
                header, status = refused
                # The header's name only: its value is the requester's text.
                log.warning("aimem: refused an HTTP request: %s header not allowed", header)
                await _refuse(send, status, f"{header} header not allowed")
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> tuple[str, int] | None:
        hosts = [h.decode("latin-1").strip() for h in _headers(scope, b"host")]
        if len(hosts) != 1 or not self.policy.allows_host(hosts[0]):
            return "Host", 421
        origins = [o.decode("latin-1").strip() for o in _headers(scope, b"origin")]
        if len(origins) > 1 or (origins and not self.policy.allows_origin(origins[0])):
            return "Origin", 403
        return None


class BearerTokenGuard:
    """ASGI wrapper: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.strip().encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request, or answer 401/403 without the right bearer token."""
        if scope["type"] == "http":
            given = _headers(scope, b"authorization")
            if len(given) != 1 or not self._valid(given[0]):
                status = 401 if not given else 403
                bearer = (b"www-authenticate", b"Bearer")
                await _refuse(send, status, "a valid bearer token is required", bearer)
                return
        await self.app(scope, receive, send)

    def _valid(self, value: bytes) -> bool:
        # RFC 9110: the scheme is case-insensitive, and whitespace around the token is noise.
        parts = value.split(None, 1)
        if len(parts) != 2 or parts[0].lower() != b"bearer":
            return False
        return hmac.compare_digest(parts[1].strip(), self._token)


def http_token(host: str, environ: MutableMapping[str, str] | None = None) -> str | None:
    """The bearer token for an HTTP bind, refusing a non-loopback bind without one."""
    env = os.environ if environ is None else environ
    token = (env.get(TOKEN_ENV) or "").strip() or None
    if token is None and not is_loopback(host):
        raise ValidationError(
            f"Refusing to serve MCP on {host} without a token: set {TOKEN_ENV} "
            "(clients then send 'Authorization: Bearer <token>'), or bind 127.0.0.1."
        )
    return token


def check_port(port: int) -> int:
    """A TCP port to listen on (0, 'any free port', would leave clients guessing)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValidationError(f"port must be an integer from 1 to 65535, got {port!r}")
    return port


def http_url(host: str, port: int) -> str:
    """Where the HTTP transport listens, e.g. ``http://[::1]:8765/mcp``."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{HTTP_PATH}"


def listen(host: str, port: int) -> socket.socket:
    """Bind and listen before uvicorn starts, so a failure is our one-line error."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        if os.name == "posix":  # as uvicorn does; on Windows it would allow port stealing
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(socket.SOMAXCONN)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            hint = "the port is already in use; stop that server or choose another port"
        elif exc.errno == errno.EACCES:
            hint = "permission denied; choose a port above 1023"
        else:
            hint = one_line(exc.strerror or str(exc), 120)
        raise ValidationError(f"cannot listen on {http_url(host, port)}: {hint}") from None
    return sock


async def serve_http(
    server: MCPServer[Any], sock: socket.socket, policy: HostPolicy, token: str | None
) -> None:
    """Serve ``server``'s streamable HTTP app on ``sock`` behind the guards."""
    import uvicorn

    # HostGuard checks Host and Origin for every bind; the SDK's own check (exact-string
    # lists, on only for three default hosts) would disagree with it, so it is off.
    app: Any = server.streamable_http_app(
        streamable_http_path=HTTP_PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    if token is not None:
        app = BearerTokenGuard(app, token)
    config = uvicorn.Config(HostGuard(app, policy), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])
