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
