"""The demo's HTTP server: static pages and the JSON API on 127.0.0.1.

GET  /svm, /rvm                 the two pages (``?preset=N`` picks a preset)
GET  /static/<file>             their script and style sheet
GET  /api/presets/<page>/<N>    a preset's data and settings
POST /api/svm, /api/rvm         solve (see ``api.py``)
POST /api/load                  parse an uploaded CSV or LIBSVM-format file into points

HEAD is answered wherever GET is. Every error is a JSON body ``{"error": "..."}``
with a 4xx status (405 with ``Allow`` for another method, 408 for a request
that does not arrive in time, 413 for a body or a solve too large, 431 for too
large a head, 503 when busy), and 500 only for a failure of the library itself.

How it holds under load. Connections live on one asyncio event loop (the
standard library's): an idle or slow socket costs a buffer, not a thread. A
request reaches a thread only once its head and body are in hand, and each
phase has its deadline: ``IDLE_TIMEOUT`` for the first byte of the next
request, ``READ_TIMEOUT`` for the rest of it, ``WRITE_TIMEOUT`` for the
answer. Work runs in two bounded pools, so large solves cannot starve small
ones: a request whose cost (``api.solve_cost``: points times the method's
cost) is at most ``api.LIGHT_COST`` goes to the light pool of threads, with
the pages and presets; a larger one to the heavy pool of ``HEAVY_SOLVES``
processes, all cores but one and at a lower priority (the SMO's and the fast
RVM's compiled loops hold the GIL for a whole solve, so a heavy solve in a
thread would stall every other request).
Each pool takes a few waiting requests beyond its workers and answers 503
past that, as the server does past ``MAX_CONNECTIONS`` open connections. A
client that leaves mid-solve is noted in the debug log, not with a traceback.

Why not an ASGI server: ``benchmarks/demo_load.py`` runs one load against this
server and against uvicorn with Starlette over the same routes and pools.
Their light latency is the same (the pools decide it); uvicorn closed none of
200 idle sockets (its keep-alive timer starts after a response), has no read
deadline for a slow head, and answers its own errors in plain text, so it
would need this code around it, and two dependencies.
"""

from __future__ import annotations

import asyncio
import http.client
import io
import json
import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
import webbrowser
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

from .api import LIGHT_COST, ApiError, handle_rvm, handle_svm, load_upload, machine_options, solve_cost
from ..validation import shown
from .presets import RVM_PRESETS, SVM_PRESETS, rvm_preset, svm_preset

__all__ = ["DemoServer", "make_server", "serve", "MAX_BODY", "IDLE_TIMEOUT", "READ_TIMEOUT", "WRITE_TIMEOUT",
           "MAX_CONNECTIONS", "HEAVY_SOLVES"]

LOG = logging.getLogger("sparsekernel.demo")
STATIC = Path(__file__).parent / "static"
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8"}
PAGES = {"/svm": "svm.html", "/rvm": "rvm.html"}

MAX_BODY = 8 * 1024 * 1024      # bytes of a request body
DRAIN_MAX = 8 * MAX_BODY        # bytes read and dropped from an oversized body, so the client reads its 413
MAX_HEAD = 64 * 1024            # bytes of the request line and headers
MAX_DEPTH = 16                  # nesting of a JSON body (the API's deepest is 3: {"points": [[x, y, t]]})
IDLE_TIMEOUT = 5.0              # seconds for the first byte of a request on an open connection
READ_TIMEOUT = 10.0             # seconds for the rest of the request, from its first byte
WRITE_TIMEOUT = 10.0            # seconds for the client to take the answer
LINGER = 1.0                    # seconds to read and drop what a client sends after our last answer
MAX_CONNECTIONS = 512           # open connections at once (an idle one costs a buffer)
LIGHT_THREADS, LIGHT_WAITING = 4, 32    # the pages, presets, uploads and solves of cost <= LIGHT_COST
HEAVY_SOLVES = max(1, min(4, (os.cpu_count() or 2) - 1))   # processes for larger solves (every RVM fit):
HEAVY_WAITING = 6                       # all cores but one, so that the light requests keep one
HEAVY_NICE = 10                         # the heavy processes' niceness: the light requests come first
ORPHAN_CHECK = 1.0              # seconds between a heavy worker's checks that the server still runs
ALLOW_GET, ALLOW_POST = "GET, HEAD", "POST"


@dataclass(frozen=True)
class Response:
    """One answer: status, body, its content type, and any further headers."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def _error(status: int, message: str, **headers: str) -> Response:
    return Response(status, json.dumps({"error": message}).encode(), headers=headers)


def _ok(payload: Any) -> Response:
    return Response(200, json.dumps(payload, allow_nan=False).encode())


# -- the routes: a request in, a Response out, no sockets ----------------------------------------

def _allowed(path: str) -> str | None:
    """The methods a path answers ("GET, HEAD" or "POST"), None for no such path."""
    if path in ("/", "/favicon.ico", *PAGES) or path.startswith(("/static/", "/api/presets/")):
        return ALLOW_GET
    return ALLOW_POST if path in POST_ROUTES else None


def _get(target: str) -> Response:
    url = urlsplit(target)
    path = url.path
    if path == "/":
        return Response(302, b"", "text/plain", {"Location": "/svm"})
    if path == "/favicon.ico":
        return Response(204, b"", "text/plain")
    if path == "/svm":          # the machine menu comes from the machines' declarations
        page = (STATIC / PAGES[path]).read_text().replace("<!-- machine options -->", machine_options())
        return Response(200, page.encode(), CONTENT_TYPES[".html"])
    if path in PAGES:
        return _file(STATIC / PAGES[path])
    if path.startswith("/static/"):
        name = path[len("/static/"):]
        if "/" in name or "\\" in name or name.startswith("."):
            return _error(404, f"no such file: {shown(name)}")
        return _file(STATIC / name)
    return _preset(path, parse_qs(url.query))


def _file(file: Path) -> Response:
    try:
        found = file.is_file()
    except OSError:       # a name longer than the file system's (ENAMETOOLONG): no such file either
        found = False
    if not found:
        return _error(404, f"no such file: {shown(file.name)}")
    return Response(200, file.read_bytes(), CONTENT_TYPES.get(file.suffix, "application/octet-stream"))


def _preset(path: str, query: dict[str, list[str]]) -> Response:
    parts = path.strip("/").split("/")
    presets = {"svm": (SVM_PRESETS, svm_preset), "rvm": (RVM_PRESETS, rvm_preset)}
    number = parts[3] if len(parts) == 4 else ""
    # ASCII digits, and few of them: "\u00b2" is a digit to isdigit() and not to int(), and int() refuses
    # 5,000 digits (Python's limit of 4,300), both raised past the handler before
    if len(parts) != 4 or parts[2] not in presets or not (number.isascii() and number.isdigit()) \
            or len(number) > 3 or int(number) not in presets[parts[2]][0]:
        return _error(404, f"no such preset: {shown(path)}")
    options = {}
    if "noise" in query:
        try:
            options["noise"] = float(query["noise"][0])
        except ValueError:
            return _error(400, f"noise must be a number; got {query['noise'][0]!r}")
        if not 0.0 <= options["noise"] <= 2.0:
            return _error(400, f"noise must be in [0, 2]; got {options['noise']}")
    try:
        return _ok(presets[parts[2]][1](int(parts[3]), **options))
    except TypeError:
        return _error(400, f"preset {parts[3]} of the {parts[2]} page takes no options; got {sorted(options)}")


POST_ROUTES: dict[str, Callable[[Any], dict[str, Any]]] = {"/api/svm": handle_svm, "/api/rvm": handle_rvm,
                                                            "/api/load": load_upload}


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in a decoded JSON value (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def decode(body: bytes) -> Any:
    """The JSON body, or ApiError 400 for one that is not JSON or nests deeper than MAX_DEPTH."""
    try:
        payload = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        payload = None
        depth = MAX_DEPTH + 1
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"the request body must be JSON: {exc}") from exc
    else:
        depth = _depth(payload)
    if depth > MAX_DEPTH:
        raise ApiError(400, f"the request body must nest at most {MAX_DEPTH} levels deep")
    return payload


def _solve(path: str, payload: Any) -> Response:
    try:
        return _ok(POST_ROUTES[path](payload))
    except ApiError as exc:
        return _error(exc.status, exc.message)
    except Exception as exc:  # a failure of the library must not take the server down
        LOG.exception("demo request failed")
        return _error(500, f"the server failed on this request: {type(exc).__name__}: {exc}")


def _admit(path: str, body: bytes) -> tuple[Any, float] | Response:
    """The decoded body and its cost, or the 4xx answer for one that cannot be served."""
    try:
        payload = decode(body)
        return payload, solve_cost(path, payload)
    except ApiError as exc:
        return _error(exc.status, exc.message)


# -- the transport: HTTP/1.1 on asyncio streams ---------------------------------------------------

class _Refused(Exception):
    """A request answered with ``response`` before its work starts; the connection then closes."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


class _Pool:
    """A bounded pool: ``workers`` at work and ``waiting`` queued; past that, 503."""

    def __init__(self, name: str, workers: int, waiting: int, processes: bool = False) -> None:
        self.name, self.workers, self.waiting, self.processes = name, workers, waiting, processes
        self.busy = 0                # counted on the event loop's thread only, so no lock
        self.warmed: list[Future[None]] = []
        self.executor = self._new_executor()

    def _new_executor(self) -> Executor:
        if self.processes:
            return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=_worker_start, initargs=(os.getpid(),))
        return ThreadPoolExecutor(self.workers, thread_name_prefix=f"demo-{self.name}")

    def warm(self) -> None:
        """Start each process on a warm-up solve (for threads: one daemon thread, which does not hold
        up the interpreter's exit as a pool's thread would)."""
        if not self.processes:
            self.warmed = [_in_daemon_thread(_warm)]
            return
        try:
            self.warmed = [self.executor.submit(_warm) for _ in range(self.workers)]
        except RuntimeError:         # shut down meanwhile
            pass

    async def run(self, work: Callable[..., Response], *args: Any) -> Response:
        if self.busy >= self.workers + self.waiting:
            return _error(503, f"the server is busy: {self.busy} {self.name} requests are running or waiting "
                               f"(at most {self.workers + self.waiting}); try again in a moment",
                          **{"Retry-After": "1"})
        self.busy += 1
        executor = self.executor
        try:
            return await asyncio.get_running_loop().run_in_executor(executor, work, *args)
        except BrokenExecutor:
            if executor is self.executor:        # the first of its requests to hear: start anew, once
                LOG.error("a %s worker died; starting the pool anew", self.name)
                executor.shutdown(wait=False, cancel_futures=True)
                self.executor = self._new_executor()
                self.warm()
            return _error(503, "the worker solving this request died (out of memory?); try again or use "
                               "fewer points", **{"Retry-After": "1"})
        finally:
            self.busy -= 1

    def close(self) -> None:
        """Stop taking work; end the processes at once (their solves are lost: their clients are gone)."""
        if isinstance(self.executor, ProcessPoolExecutor):
            if hasattr(self.executor, "terminate_workers"):          # Python >= 3.14
                self.executor.terminate_workers()
            else:                                                   # no public way before it
                for process in list((getattr(self.executor, "_processes", None) or {}).values()):
                    process.terminate()
        self.executor.shutdown(wait=False, cancel_futures=True)


def _worker_start(server: int) -> None:
    """A heavy worker yields the CPU to the server's light work (HEAVY_NICE), leaves Ctrl-C to the
    server, which ends it, and ends itself if the server dies without doing so (killed): it is then no
    longer the worker's parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(HEAVY_NICE)

    def watch() -> None:
        while os.getppid() == server:
            time.sleep(ORPHAN_CHECK)
        os._exit(0)

    threading.Thread(target=watch, name="demo-orphan-watch", daemon=True).start()


def _in_daemon_thread(work: Callable[[], None]) -> Future[None]:
    future: Future[None] = Future()

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
            future.set_exception(exc)
        else:
            future.set_result(None)

    threading.Thread(target=run, name="demo-warm", daemon=True).start()
    return future


def _warm() -> None:
    """A pool's first task: a tiny SVM and RVM solve, so numba's loops are compiled or loaded from its
    cache before a client waits for them."""
    handle_svm({"points": [[0.0, 0.0, 1.0], [1.0, 1.0, -1.0]]})
    handle_rvm({"points": [[0.0, 0.0], [0.5, 1.0], [1.0, 0.0]]})


def _content_length(headers: http.client.HTTPMessage) -> int:
    if headers.get("Transfer-Encoding"):
        raise _Refused(_error(411, "the demo reads request bodies by Content-Length, not Transfer-Encoding"))
    values = set(headers.get_all("Content-Length") or [])
    if len(values) > 1:
        raise _Refused(_error(400, f"Content-Length must be given once; got {sorted(values)}"))
    text = values.pop().strip() if values else "0"
    if not (text.isascii() and text.isdigit()):
        raise _Refused(_error(400, f"Content-Length must be a non-negative integer; got {text[:40]!r}"))
    if len(text) > 18:    # far above MAX_BODY, and int() refuses 4,300 digits and more
        raise _Refused(_error(413, f"the request body must be at most {MAX_BODY} bytes; got a Content-Length of "
                                   f"{len(text)} digits"))
    return int(text)


def _parse_head(head: bytes) -> tuple[str, str, str, http.client.HTTPMessage]:
    """Method, target, version and headers of a request head (up to its blank line)."""
    line, _, rest = head.lstrip(b"\r\n").partition(b"\r\n")
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1") or not parts[1].startswith("/"):
        raise _Refused(_error(400, f"a request line must be 'METHOD /path HTTP/1.1'; got {line[:80]!r}"))
    try:
        headers = http.client.parse_headers(io.BytesIO(rest))
    except http.client.HTTPException as exc:
        raise _Refused(_error(431, f"the request's headers are too many or too long: {exc}")) from exc
    return parts[0], parts[1], parts[2], headers


def _encode(response: Response, head_only: bool, close: bool) -> bytes:
    phrase = HTTPStatus(response.status).phrase
    lines = [f"HTTP/1.1 {response.status} {phrase}", f"Content-Type: {response.content_type}",
             f"Content-Length: {len(response.body)}", "Cache-Control: no-store", "Server: sparsekernel-demo"]
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    if close:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only else head + response.body


class DemoServer:
    """The demo's server, bound at construction; ``serve_forever`` runs it, ``shutdown`` (from another
    thread) stops it, ``server_close`` releases the socket: the calls of ``socketserver``'s servers."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, idle_timeout: float = IDLE_TIMEOUT,
                 read_timeout: float = READ_TIMEOUT, write_timeout: float = WRITE_TIMEOUT) -> None:
        self.idle_timeout, self.read_timeout, self.write_timeout = idle_timeout, read_timeout, write_timeout
        self.socket = socket.create_server((host, port), backlog=512)
        self.server_address: tuple[str, int] = self.socket.getsockname()[:2]
        self.light = _Pool("light", LIGHT_THREADS, LIGHT_WAITING)
        self.heavy = _Pool("heavy", HEAVY_SOLVES, HEAVY_WAITING, processes=True)
        self.connections: set[asyncio.StreamWriter] = set()
        # numba compiles (or loads from its cache) here first, then the heavy processes load its cache
        self._heavy_warming = threading.Event()
        self.light.warm()
        self.light.warmed[0].add_done_callback(self._warm_heavy)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._closing = False
        self._done = threading.Event()

    # socketserver's calls
    def serve_forever(self) -> None:
        try:
            asyncio.run(self._serve())
        finally:
            self._done.set()

    def shutdown(self) -> None:
        with self._lock:
            self._closing = True
            loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            loop.call_soon_threadsafe(stop.set)
            self._done.wait()

    def _warm_heavy(self, _light_warmed: Future[None]) -> None:
        self.heavy.warm()
        self._heavy_warming.set()

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Block until both pools have loaded the library's compiled loops; whether they did in time."""
        start = time.monotonic()
        left = (lambda: None) if timeout is None else (lambda: max(0.0, timeout - (time.monotonic() - start)))
        if wait(self.light.warmed, left()).not_done or not self._heavy_warming.wait(left()):
            return False
        return not wait(self.heavy.warmed, left()).not_done

    def server_close(self) -> None:
        self.socket.close()
        self.light.close()
        self.heavy.close()

    async def _serve(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self._connection, sock=self.socket, limit=MAX_HEAD)
        try:
            await self._stop.wait()
        finally:
            server.close()
            for writer in list(self.connections):
                writer.transport.abort()

    # one connection: requests until it closes, idles or errs
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self.connections) >= MAX_CONNECTIONS:
            busy = _error(503, f"the server has {len(self.connections)} connections open (at most "
                               f"{MAX_CONNECTIONS}); try again in a moment", **{"Retry-After": "1"})
            return await self._reply(writer, busy, head_only=False, close=True)
        self.connections.add(writer)
        try:
            while await self._exchange(reader, writer):
                pass
            await self._linger(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            LOG.debug("connection from %s closed or timed out", writer.get_extra_info("peername"))
            writer.transport.abort()
        except Exception:  # a bug here must close this connection, not the server
            LOG.exception("demo connection failed")
            writer.transport.abort()
        finally:
            self.connections.discard(writer)
            writer.close()

    @staticmethod
    async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Close our side, then read and drop what the client still sends for up to LINGER seconds: a
        socket closed with unread bytes resets the connection, and the client could lose its answer."""
        if writer.transport.is_closing() or not writer.can_write_eof():
            return
        try:
            writer.write_eof()
        except OSError:     # the client has gone (ENOTCONN, not a ConnectionError): a client that left mid-solve
            LOG.debug("the client %s left before the connection closed", writer.get_extra_info("peername"))
            return
        try:
            await asyncio.wait_for(DemoServer._drain(reader, DRAIN_MAX), LINGER)
        except asyncio.TimeoutError:
            pass

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request, answer it; whether the connection stays open for another."""
        loop = asyncio.get_running_loop()
        try:
            first = await asyncio.wait_for(reader.readexactly(1), self.idle_timeout)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError):
            return False                                   # idle or closed between requests: just close
        deadline = loop.time() + self.read_timeout
        method = "GET"
        try:
            head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), deadline - loop.time())
            method, target, version, headers = _parse_head(head)
            length = _content_length(headers)
            body = await self._body(reader, writer, headers, length, deadline - loop.time())
        except _Refused as refused:
            await self._reply(writer, refused.response, method == "HEAD", close=True)
            return False
        except asyncio.LimitOverrunError:
            await self._reply(writer, _error(431, f"the request's head must be at most {MAX_HEAD} bytes"), False, True)
            return False
        except asyncio.TimeoutError:
            message = f"the request did not arrive within {self.read_timeout:g} s"
            await self._reply(writer, _error(408, message), method == "HEAD", close=True)
            return False
        close = version == "HTTP/1.0" or "close" in headers.get("Connection", "").lower()
        response = await self._respond(method, target, body)
        await self._reply(writer, response, method == "HEAD", close)
        return not close

    async def _body(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    headers: http.client.HTTPMessage, length: int, timeout: float) -> bytes:
        if length > MAX_BODY:
            await asyncio.wait_for(self._drain(reader, length), timeout)
            raise _Refused(_error(413, f"the request body must be at most {MAX_BODY} bytes; got {length}"))
        if length and headers.get("Expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        return await asyncio.wait_for(reader.readexactly(length), timeout) if length else b""

    @staticmethod
    async def _drain(reader: asyncio.StreamReader, length: int) -> None:
        """Read and drop an oversized body (up to DRAIN_MAX bytes) so the client can read the 413."""
        remaining = min(length, DRAIN_MAX)
        while remaining > 0:
            chunk = await reader.read(min(remaining, 1 << 16))
            if not chunk:
                return
            remaining -= len(chunk)

    async def _respond(self, method: str, target: str, body: bytes) -> Response:
        path = urlsplit(target).path
        allowed = _allowed(path)
        if allowed is None:
            return _error(404, f"no such page or API route: {shown(path)}")
        if method not in allowed.split(", "):
            return _error(405, f"{path} answers {allowed}; got {shown(method)}", Allow=allowed)
        if allowed == ALLOW_GET:
            return await self.light.run(_get, target)
        admitted = await self.light.run(_admit, path, body)
        if isinstance(admitted, Response):
            return admitted
        payload, cost = admitted
        return await (self.light if cost <= LIGHT_COST else self.heavy).run(_solve, path, payload)

    async def _reply(self, writer: asyncio.StreamWriter, response: Response, head_only: bool, close: bool) -> None:
        if writer.transport.is_closing():
            LOG.debug("the client left before its %d answer", response.status)
            return
        writer.write(_encode(response, head_only, close))
        await asyncio.wait_for(writer.drain(), self.write_timeout)


def make_server(port: int = 0, host: str = "127.0.0.1", **timeouts: float) -> DemoServer:
    """A server bound to ``host``:``port`` (0: a free port); ``server.server_address`` tells which.
    ``timeouts``: ``idle_timeout``, ``read_timeout``, ``write_timeout`` in seconds."""
    return DemoServer(host, port, **timeouts)


def serve(port: int = 0, open_browser: bool = True, announce: Callable[[str], None] = print) -> None:
    """Serve until interrupted, printing the address (and opening the browser on it)."""
    server = make_server(port)
    url = f"http://{server.server_address[0]}:{server.server_address[1]}/svm"
    announce(f"sparsekernel demo at {url} (and /rvm); press Ctrl-C to stop")
    sys.stdout.flush()
    if open_browser:
        threading.Timer(0.5, lambda: webbrowser.open(url)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
