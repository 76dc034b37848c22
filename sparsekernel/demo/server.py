"""The demo's HTTP server: static pages and the JSON API on 127.0.0.1.

GET  /svm, /rvm                 the two pages (``?preset=N`` picks a preset)
GET  /static/<file>             their script and style sheet
GET  /api/presets/<page>/<N>    a preset's data and settings
POST /api/svm, /api/rvm         solve (see ``api.py``)
POST /api/load                  parse an uploaded CSV or LIBSVM-format file into points

Every error is answered with a JSON body ``{"error": "..."}`` and a 4xx
status (5xx for a failure of the library itself); the server keeps serving.
"""

from __future__ import annotations

import json
import sys
import logging
import tempfile
import threading
import webbrowser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlparse

from .api import ApiError, handle_rvm, handle_svm, machine_options
from .presets import RVM_PRESETS, SVM_PRESETS, rvm_preset, svm_preset

__all__ = ["make_server", "serve", "MAX_BODY"]

LOG = logging.getLogger("sparsekernel.demo")
STATIC = Path(__file__).parent / "static"
MAX_BODY = 8 * 1024 * 1024
DRAIN_MAX = 8 * MAX_BODY
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8"}
PAGES = {"/svm": "svm.html", "/rvm": "rvm.html"}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError(400, f"the request body must be JSON: {exc}") from exc


def _load(payload: Any) -> dict[str, Any]:
    """Parse an uploaded data file with the library's loaders."""
    from ..datasets import load_csv, load_libsvm
    from ..errors import ValidationError

    if not isinstance(payload, dict) or payload.get("format") not in ("csv", "libsvm") \
            or not isinstance(payload.get("content"), str):
        raise ApiError(400, "the body must be {\"format\": \"csv\" or \"libsvm\", \"content\": \"...\"}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"upload.{payload['format']}"
        path.write_text(payload["content"])
        try:
            # the demo draws 1 or 2 input columns in the plane: dense values (densified explicitly)
            X, t = load_csv(path) if payload["format"] == "csv" else load_libsvm(path, dense=True)
        except ValidationError as exc:
            raise ApiError(400, str(exc).replace(str(path), "the file")) from exc
    if X.shape[1] not in (1, 2):
        raise ApiError(400, f"the file must have 1 input column (regression) or 2 (classification); got {X.shape[1]}")
    rows = [list(map(float, x)) + [float(v)] for x, v in zip(X, t)]
    return {"points": rows, "n": len(rows), "inputs": int(X.shape[1])}


ROUTES: dict[str, Callable[[Any], dict[str, Any]]] = {"/api/svm": handle_svm, "/api/rvm": handle_rvm,
                                                       "/api/load": _load}


class Handler(BaseHTTPRequestHandler):
    server_version = "sparsekernel-demo"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        LOG.debug("%s - %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload, allow_nan=False).encode("utf-8"), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        path = urlparse(self.path).path
        if path in ("/", ""):
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", "/svm")
            self.end_headers()
            return
        if path == "/favicon.ico":
            self.send_response(HTTPStatus.NO_CONTENT)
            self.end_headers()
            return
        if path == "/svm":          # the machine menu comes from the machines' declarations
            page = (STATIC / PAGES[path]).read_text().replace("<!-- machine options -->", machine_options())
            return self._send(200, page.encode(), CONTENT_TYPES[".html"])
        if path in PAGES:
            return self._file(STATIC / PAGES[path])
        if path.startswith("/static/"):
            name = path[len("/static/"):]
            if "/" in name or name.startswith("."):
                return self._error(404, f"no such file: {name}")
            return self._file(STATIC / name)
        if path.startswith("/api/presets/"):
            return self._preset(path, parse_qs(urlparse(self.path).query))
        self._error(404, f"no such page: {path}")

    def _file(self, file: Path) -> None:
        if not file.is_file():
            return self._error(404, f"no such file: {file.name}")
        self._send(200, file.read_bytes(), CONTENT_TYPES.get(file.suffix, "application/octet-stream"))

    def _preset(self, path: str, query: dict[str, list[str]]) -> None:
        parts = path.strip("/").split("/")
        presets = {"svm": (SVM_PRESETS, svm_preset), "rvm": (RVM_PRESETS, rvm_preset)}
        if len(parts) != 4 or parts[2] not in presets or not parts[3].isdigit() \
                or int(parts[3]) not in presets[parts[2]][0]:
            return self._error(404, f"no such preset: {path}")
        options = {}
        if "noise" in query:
            try:
                options["noise"] = float(query["noise"][0])
            except ValueError:
                return self._error(400, f"noise must be a number; got {query['noise'][0]!r}")
            if not 0.0 <= options["noise"] <= 2.0:
                return self._error(400, f"noise must be in [0, 2]; got {options['noise']}")
        try:
            self._json(200, presets[parts[2]][1](int(parts[3]), **options))
        except TypeError:
            self._error(400, f"preset {parts[3]} of the {parts[2]} page takes no options; got {sorted(options)}")

    def _drain(self, length: int) -> None:
        """Read and drop an oversized body (up to DRAIN_MAX bytes) so the client can read the 413."""
        self.close_connection = True
        remaining = min(length, DRAIN_MAX)
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 1 << 16))
            if not chunk:
                break
            remaining -= len(chunk)

    def do_POST(self) -> None:  # noqa: N802
        path = urlparse(self.path).path
        handler = ROUTES.get(path)
        if handler is None:
            return self._error(404, f"no such API route: {path}")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return self._error(400, "Content-Length must be an integer")
        if length > MAX_BODY:
            self._drain(length)
            return self._error(413, f"the request body must be at most {MAX_BODY} bytes; got {length}")
        try:
            self._json(200, handler(_decode(self.rfile.read(length))))
        except ApiError as exc:
            self._error(exc.status, exc.message)
        except Exception as exc:  # a failure of the library must not take the server down
            LOG.exception("demo request failed")
            self._error(500, f"the server failed on this request: {type(exc).__name__}: {exc}")


def make_server(port: int = 0, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A server bound to ``host``:``port`` (0: a free port); ``server.server_address`` tells which."""
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


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
