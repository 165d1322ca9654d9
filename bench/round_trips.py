"""Round trips to PostgreSQL per save and per search, counted on loopback.

A small TCP relay sits between aimem and the server (``--pg-url``'s host and port) and
counts the client's sends: each is one message batch aimem waits on (a statement,
BEGIN, COMMIT, ROLLBACK, a ping). A fresh database is filled with ``--size`` memories
through the relay's far side (not counted), then ``--saves`` saves (an instant judge,
``HashEmbedder``) and ``--queries`` keyword and hybrid searches are counted. The
database is dropped afterwards.

    python bench/round_trips.py --size 1000 --saves 50
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import threading
import uuid
from urllib.parse import urlsplit

import aimem
from aimem.testing import FixedJudge, HashEmbedder

DEFAULT_PG = os.environ.get("AIMEM_BENCH_PG_URL", "postgresql://root@127.0.0.1:5432/postgres")


class CountingRelay:
    """A loopback relay to one server that counts what clients send through it."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.sends = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            for source, sink, counted in ((client, server, True), (server, client, False)):
                threading.Thread(
                    target=self._pipe, args=(source, sink, counted), daemon=True
                ).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, counted: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if counted:
                    with self._lock:
                        self.sends += 1
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()


def texts(n: int, start: int = 0) -> list[str]:
    topics = ["tea", "cello", "Leeds", "penicillin", "Rust", "Miso the cat", "running", "Kyoto"]
    return [
        f"Memory {i}: the user mentioned {topics[i % len(topics)]} on day {i // 7} ({i * 37 % 101})"
        for i in range(start, start + n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pg-url", default=DEFAULT_PG, help="an admin URL of the server")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--saves", type=int, default=50)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--option", default="", help="extra URL query, e.g. vectors=memory")
    args = parser.parse_args()
    import psycopg

    admin = args.pg_url.replace("+psycopg", "")
    parts = urlsplit(admin)
    db = f"aimem_bench_trips_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db}"')  # type: ignore[arg-type]
    relay = CountingRelay(parts.hostname or "127.0.0.1", parts.port or 5432)
    direct = f"{parts.scheme}://{parts.netloc}/{db}"
    user = f"{parts.username}@" if parts.username else ""
    relayed = f"{parts.scheme}://{user}127.0.0.1:{relay.port}/{db}"
    if args.option:
        direct, relayed = f"{direct}?{args.option}", f"{relayed}?{args.option}"
    embedder = HashEmbedder(dim=384)
    try:
        with aimem.MemoryStore(
            direct, judge=FixedJudge(), embedder=embedder, related_limit=0, max_memories=10**6
        ) as store:
            for i in range(0, args.size, 500):
                store.save_many(texts(min(500, args.size - i), start=i))
        row: dict[str, object] = {"bench": "round_trips", "size": args.size}
        with aimem.MemoryStore(
            relayed, judge=FixedJudge(), embedder=embedder, max_memories=10**6
        ) as store:
            store.save("a first save, to warm the pool and the vector index")
            store.search("first", mode="hybrid")
            before = relay.sends
            for text in texts(args.saves, start=10**6):
                store.save(text)
            row["sends_per_save"] = round((relay.sends - before) / args.saves, 2)
            for mode in ("keyword", "hybrid"):
                before = relay.sends
                for i in range(args.queries):
                    store.search(f"what about tea day {i}", mode=mode)
                row[f"sends_per_{mode}_search"] = round((relay.sends - before) / args.queries, 2)
            row["vector_search"] = getattr(store.stats(), "vector_search", None)
        print(json.dumps(row), flush=True)
    finally:
        relay.close()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
