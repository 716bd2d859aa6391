"""What the tests share: the server the Go test started (SKIPLOCK_TEST_*),
fresh queue names, waiting, and worker processes."""
import logging
import os
import subprocess
import sys
import time
import unittest
import uuid
from typing import Any, Callable, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import skiplock  # noqa: E402

SERVER = os.environ.get("SKIPLOCK_TEST_SERVER", "")
TOKEN = os.environ.get("SKIPLOCK_TEST_TOKEN") or None
WORKER_TOKEN = os.environ.get("SKIPLOCK_TEST_WORKER_TOKEN") or None
TENANT_TOKEN = os.environ.get("SKIPLOCK_TEST_TENANT_TOKEN") or None
BINARY = os.environ.get("SKIPLOCK_TEST_BINARY", "")
RESTART_DATABASE_URL = os.environ.get("SKIPLOCK_TEST_RESTART_DATABASE_URL", "")
TLS_SERVER = os.environ.get("SKIPLOCK_TEST_TLS_SERVER", "")
TLS_CA = os.environ.get("SKIPLOCK_TEST_TLS_CA", "")
TMP = os.environ.get("SKIPLOCK_TEST_TMP") or "/tmp"

needs_server = unittest.skipUnless(
    SERVER, "SKIPLOCK_TEST_SERVER is not set: run these through `go test ./clients/python`, which starts servers")


logging.getLogger("skiplock").setLevel(logging.DEBUG if os.environ.get("SKIPLOCK_TEST_LOG") else logging.CRITICAL)


def client(token: Optional[str] = TOKEN, **kw: Any) -> skiplock.Client:
    return skiplock.Client(SERVER, token=token, **kw)


def fresh(name: str) -> str:
    """A queue (or key) name no other test uses."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


def wait_for(pred: Callable[[], Any], timeout: float, what: str, every: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(every)


def worker_process(*args: str, server: str = "", token: Optional[str] = None) -> "subprocess.Popen[bytes]":
    """Start tests/worker_proc.py with args."""
    env = dict(os.environ)
    env["SKIPLOCK_SERVER"] = server or SERVER
    env["SKIPLOCK_TOKEN"] = token or WORKER_TOKEN or TOKEN or ""
    return subprocess.Popen([sys.executable, os.path.join(HERE, "worker_proc.py"), *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def read_runs(path: str) -> List[List[str]]:
    """The lines a worker process wrote to its runs file, split."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split() for line in f.read().splitlines() if line.strip()]


def lines_with(path: str, n: int) -> Callable[[], Optional[List[List[str]]]]:
    def pred() -> Optional[List[List[str]]]:
        runs = read_runs(path)
        return runs if len(runs) >= n else None
    return pred


class FaultProxy:
    """An HTTP proxy in front of the test server that answers 503
    ``unavailable`` (as a server whose database is down does) to every
    request while ``down`` is set."""

    def __init__(self, target: str) -> None:
        import http.client
        import http.server
        import threading
        import urllib.parse

        u = urllib.parse.urlsplit(target)
        proxy = self
        self.down = False
        self.refused = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if proxy.down:
                    proxy.refused += 1
                    self.answer(503, b'{"error":{"code":"unavailable","message":"database is down"}}')
                    return
                conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=90)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    res = conn.getresponse()
                    self.answer(res.status, res.read())
                finally:
                    conn.close()

            def answer(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = forward

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a worker that stops abandons its claim mid-answer

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
