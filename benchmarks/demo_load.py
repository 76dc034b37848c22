"""The demo server under one bounded load, served two ways: this package's server (the standard
library's asyncio streams, ``sparsekernel/demo/server.py``) and uvicorn with Starlette over the
same routes, pools and limits (``DemoServer._respond``), so that only the HTTP layer differs.

Run from the repository root (the ASGI server needs uvicorn and Starlette, which sparsekernel
does not depend on):

    pip install uvicorn starlette                 # only for --servers asgi
    python benchmarks/demo_load.py                # both, the default load (about a minute each)
    python benchmarks/demo_load.py --servers stdlib --light 8 --requests 40 --idle 200 --slow 50

Each server runs in its own process with an idle timeout of 1 s (uvicorn: ``timeout_keep_alive``;
it has no read timeout) and a read timeout of 2 s, and is warmed (numba's loops loaded) before the
load starts. The load, from this process: ``--light`` threads of ``--requests`` requests each
(pages, scripts, presets, small SVM solves, fuzzed and malformed bodies, other methods), one RVM
fit in ten, two clients of two large SVM solves each (1,800 points), ``--idle`` sockets that send
nothing and ``--slow`` ones that send a request head a byte every 50 ms, and every malformed kind
of issue 19 once. It reports the answers by status, the light requests' latency while the large
solves run, how long the server took to close the idle and slow sockets (and how many it never
closed), and the server's threads and resident memory (with its worker processes) at the end.

Measured on the development machine (2 cores shared with other work, load average 6-11; so one
heavy process), the default load (338 requests, of which 14 malformed by hand; 200 idle and 50
slow sockets):

    server  by status                            5xx but  non-JSON  light p50/p95/max  idle sockets  slow sockets  threads  RSS MiB
                                                  503      errors   during heavy (s)   closed (max)  closed (max)           (+ worker)
    stdlib  200: 209, 400: 40, 405: 70,          0        0        0.015/0.089/0.149  200 (2.1 s)   50 (2.0 s)    9        294 (+322)
            413: 2, 422: 1, 503: 16
    asgi    the same                             0        3        0.011/0.072/0.132  0 (never)     50 (8.2 s)    9        297 (+322)

The 503s are RVM fits and large solves meeting a full heavy pool (HEAVY_SOLVES running, 6 waiting), as
designed. The light latency is the same: both hand the work to the same bounded pools. The
difference is the HTTP layer: uvicorn closes no connection that never sends a request (its
keep-alive timer starts after a response), has no read deadline (a slow head is served when it
is complete, after 6-8 s here, never closed if it stalls), and answers its own errors (a
malformed request line, a method its route lacks, its concurrency limit) in plain text. Making
it hold as the standard library's server does would take the same code around it, and two
dependencies; so the demo stays on the standard library.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

IDLE, READ = 1.0, 2.0
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]


# -- the servers ----------------------------------------------------------------------------------

def serve_stdlib() -> None:
    from sparsekernel.demo import make_server

    server = make_server(0, idle_timeout=IDLE, read_timeout=READ)
    server.wait_warm(600)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.server_close()


def serve_asgi() -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from sparsekernel.demo import make_server
    from sparsekernel.demo.server import MAX_BODY, MAX_CONNECTIONS, _error

    routes = make_server(0)       # its pools and _respond; its own socket is never served
    routes.wait_warm(600)

    async def endpoint(request: Request) -> Response:
        length = request.headers.get("content-length", "0")
        if length.isdigit() and int(length) > MAX_BODY:
            answer = _error(413, f"the request body must be at most {MAX_BODY} bytes; got {length}")
        else:
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            answer = await routes._respond(request.method, target, await request.body())
        return Response(b"" if request.method == "HEAD" else answer.body, answer.status,
                        headers={**answer.headers, "Cache-Control": "no-store"}, media_type=answer.content_type)

    app = Starlette(routes=[Route("/{path:path}", endpoint, methods=METHODS)])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    print(port, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False, lifespan="off",
                limit_concurrency=MAX_CONNECTIONS, timeout_keep_alive=int(IDLE))


# -- the load -------------------------------------------------------------------------------------

TWO = [[0, 0, 1], [1, 1, -1], [0, 1, 1], [1, 0, -1]]


def _post(path: str, body: bytes | str, *extra: str) -> bytes:
    body = body.encode() if isinstance(body, str) else body
    head = [f"POST {path} HTTP/1.1", "Host: x", f"Content-Length: {len(body)}", "Connection: close", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def _bare(method: str, path: str, *extra: str) -> bytes:
    return ("\r\n".join([f"{method} {path} HTTP/1.1", "Host: x", "Connection: close", *extra]) + "\r\n\r\n").encode()


MALFORMED = [
    _post("/api/svm", "[" * 1000 + "]" * 1000),
    _post("/api/svm", json.dumps({"points": TWO, "grid": {"xmin": -1e308, "xmax": 1e308}})),
    _post("/api/load", json.dumps({"format": "csv", "content": "x,t\n0,1\nnan,2\n"})),
    _post("/api/load", json.dumps({"format": "csv", "content": "x,y,t\n0,1,1\n2,inf,-1\n"})),
    _post("/api/rvm", json.dumps({"task": "classification", "compare_svm": True, "nu": 0.99,
                                  "points": [[0, 0, 1], [1, 1, 1], [2, 2, 1], [3, 3, -1]]})),
    _post("/api/svm", b"{}").replace(b"Content-Length: 2", b"Content-Length: -5"),
    _post("/api/svm", b" " * (8 * 1024 * 1024 + 1)),
    _post("/api/svm", json.dumps({"method": "qp-clarabel", "points": TWO * 1250})),
    _bare("PUT", "/api/svm"), _bare("DELETE", "/svm"), _bare("OPTIONS", "/api/rvm"), _bare("HEAD", "/svm"),
    _bare("BREW", "/svm"), b"\x16\x03\x01\x00\x10garbage\r\n\r\n",
]


def _raw(port: int, data: bytes) -> tuple[int, str]:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        try:
            sock.sendall(data)
        except OSError:             # answered (413) and closed before the whole body was sent
            pass
        chunks = []
        try:
            while chunk := sock.recv(1 << 16):
                chunks.append(chunk)
        except OSError:
            pass
    head = b"".join(chunks).partition(b"\r\n\r\n")[0].decode("latin-1")
    if not head:
        return 0, ""
    kind = next((line.split(": ", 1)[1] for line in head.split("\r\n")[1:] if line.lower().startswith("content-type")), "")
    return int(head.split()[1]), kind


def _fuzzed(rng: random.Random) -> bytes:
    keys = ["machine", "kernel", "gamma", "C", "nu", "method", "points", "grid", "task", "steps", "compare_svm"]
    values = [None, True, -1, 0, 1e308, "rbf", "smo", "", [], {}, [[0, 0, 1]], TWO, [[0, 0]], {"n": 2}, 0.5]
    if rng.random() < 0.3:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 100)))
    text = json.dumps({k: rng.choice(values) for k in rng.sample(keys, rng.randrange(1, 6))})
    return text[: rng.randrange(1, len(text) + 1)].encode() if rng.random() < 0.5 else text.encode()


def _request(rng: random.Random, k: int) -> tuple[str, str, str, bytes | None]:
    from sparsekernel import datasets

    if k % 10 == 9:
        X, t = datasets.ripley_mixture(n=rng.randrange(20, 80), seed=rng.randrange(1000))
        body = {"points": np.column_stack([X, t]).tolist(), "gamma": 2.0, "task": "classification"}
        return "rvm", "POST", "/api/rvm", json.dumps(body).encode()
    X, t = datasets.ripley_mixture(n=rng.randrange(4, 60), seed=rng.randrange(1000))
    solve = json.dumps({"points": np.column_stack([X, t]).tolist(), "gamma": 2.0}).encode()
    return rng.choice([
        ("light", "GET", "/svm", None), ("light", "GET", "/static/svm.js", None), ("light", "HEAD", "/rvm", None),
        ("light", "GET", f"/api/presets/svm/{rng.randrange(1, 6)}", None), ("light", "POST", "/api/svm", solve),
        ("light", "POST", "/api/svm", solve), ("light", "POST", rng.choice(["/api/svm", "/api/load"]), _fuzzed(rng)),
        ("light", "PUT", "/api/svm", b"{}"), ("light", "OPTIONS", "/svm", None),
    ])


def _proc(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            found += [int(child), *_descendants(int(child))]
    return found


def run_load(kind: str, light: int, requests: int, idle: int, slow: int) -> dict:
    from sparsekernel import datasets

    server = subprocess.Popen([sys.executable, __file__, "--serve", kind], stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline())
    time.sleep(0.5)
    results: list[tuple[str, int, str, float, bool]] = []
    lock = threading.Lock()
    heavy_on = threading.Event()
    X, t = datasets.ripley_mixture(n=1800, seed=7)
    heavy_body = json.dumps({"points": np.column_stack([X, t]).tolist(), "C": 10.0, "gamma": 4.0}).encode()
    heavy_done: list[float] = []

    def call(label: str, method: str, path: str, body: bytes | None) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        during = heavy_on.is_set() and len(heavy_done) < 4
        start = time.perf_counter()
        try:
            conn.request(method, path, body, {"Content-Type": "application/json"} if body is not None else {})
            response = conn.getresponse()
            response.read()
            status, ctype = response.status, response.getheader("Content-Type", "")
        except (OSError, http.client.HTTPException):
            status, ctype = 0, ""
        conn.close()
        with lock:
            results.append((label, status, ctype, time.perf_counter() - start, during))

    def heavy_client() -> None:
        for _ in range(2):
            heavy_on.set()
            call("heavy", "POST", "/api/svm", heavy_body)
            heavy_done.append(time.perf_counter())

    def light_client(seed: int) -> None:
        rng = random.Random(seed)
        for k in range(requests):
            call(*_request(rng, k))

    socks, opened = [], []
    for _ in range(idle + slow):
        socks.append(socket.create_connection(("127.0.0.1", port)))
        opened.append(time.perf_counter())
        socks[-1].setblocking(False)
    closed: dict[int, float] = {}
    head = _post("/api/svm", json.dumps({"points": TWO}))
    workers = [threading.Thread(target=heavy_client) for _ in range(2)]
    workers += [threading.Thread(target=light_client, args=(seed,)) for seed in range(light)]
    malformed: list[tuple[int, str]] = []
    workers.append(threading.Thread(target=lambda: malformed.extend(_raw(port, data) for data in MALFORMED)))
    for w in workers:
        w.start()
    k, start = 0, time.perf_counter()
    while any(w.is_alive() for w in workers) or time.perf_counter() - start < 8.0:
        for i, sock in enumerate(socks):
            if i in closed:
                continue
            if i >= idle and k < len(head):
                try:
                    sock.send(head[k:k + 1])
                except OSError:
                    pass
            try:
                while sock.recv(4096):
                    pass
                closed[i] = time.perf_counter() - opened[i]
            except BlockingIOError:
                pass
            except OSError:
                closed[i] = time.perf_counter() - opened[i]
        k += 1
        time.sleep(0.05)
    threads = _proc(server.pid, "Threads")
    rss = _proc(server.pid, "VmRSS") / 1024
    children = sum(_proc(p, "VmRSS") for p in _descendants(server.pid)) / 1024
    for sock in socks:
        sock.close()
    server.send_signal(signal.SIGINT)
    server.wait(30)

    statuses = [r[1] for r in results] + [m[0] for m in malformed]
    kinds = [r[2] for r in results] + [m[1] for m in malformed]
    during = np.array([r[3] for r in results if r[0] == "light" and r[4]])
    idle_closed = [closed[i] for i in range(idle) if i in closed]
    slow_closed = [closed[i] for i in range(idle, idle + slow) if i in closed]
    return {
        "server": kind, "requests": len(statuses),
        "by status": {s: statuses.count(s) for s in sorted(set(statuses))},
        "5xx other than 503": sum(500 <= s and s != 503 for s in statuses),
        "non-JSON 4xx/5xx": sum(s >= 400 and "json" not in c for s, c in zip(statuses, kinds)),
        "light during heavy p50/p95/max s": [round(float(np.percentile(during, q)), 3) for q in (50, 95, 100)]
        if during.size else None,
        "heavy s": [round(r[3], 1) for r in results if r[0] == "heavy"],
        "idle closed (count, max s)": (len(idle_closed), round(max(idle_closed, default=0), 1)),
        "slow closed (count, max s)": (len(slow_closed), round(max(slow_closed, default=0), 1)),
        "server threads": threads, "server RSS MiB": round(rss), "worker processes RSS MiB": round(children),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=["stdlib", "asgi"], help=argparse.SUPPRESS)
    parser.add_argument("--servers", nargs="+", choices=["stdlib", "asgi"], default=["stdlib", "asgi"])
    parser.add_argument("--light", type=int, default=8, help="light client threads (default 8)")
    parser.add_argument("--requests", type=int, default=40, help="requests per light thread (default 40)")
    parser.add_argument("--idle", type=int, default=200, help="sockets that send nothing (default 200)")
    parser.add_argument("--slow", type=int, default=50, help="sockets that send a byte every 50 ms (default 50)")
    args = parser.parse_args()
    if args.serve:
        return serve_stdlib() if args.serve == "stdlib" else serve_asgi()
    for kind in args.servers:
        print(json.dumps(run_load(kind, args.light, args.requests, args.idle, args.slow)), flush=True)


if __name__ == "__main__":
    main()
