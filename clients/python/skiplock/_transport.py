"""HTTP/1.1 keep-alive transport on http.client: a small pool of
connections shared by threads, JSON in and out, errors mapped to types."""
import http.client
import json
import logging
import socket
import ssl
import threading
import urllib.parse
from typing import Any, Dict, List, Optional, Tuple, Union

from . import __version__
from .errors import NetworkError, error_from_answer

Connection = Union[http.client.HTTPConnection, http.client.HTTPSConnection]

# Errors of a kept-alive connection the server closed while it was idle:
# the request never reached the handler, so it may be sent again.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class Transport:
    """Sends JSON requests to one server; safe to use from many threads."""

    def __init__(
        self,
        url: str,
        token: Optional[str],
        timeout: float,
        ssl_context: Optional[ssl.SSLContext],
        logger: logging.Logger,
        max_idle: int = 16,
    ) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"url: want http://host[:port] or https://host[:port], got {url!r}")
        self.url = url.rstrip("/")
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self._ssl = ssl_context
        self.timeout = timeout
        self._log = logger
        self._idle: List[Connection] = []
        self._max_idle = max_idle
        self._lock = threading.Lock()
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"skiplock-python/{__version__}",
        }
        if token:
            self._headers["Authorization"] = "Bearer " + token

    def new_connection(self, timeout: Optional[float] = None) -> Connection:
        t = self.timeout if timeout is None else timeout
        if self._https:
            ctx = self._ssl or ssl.create_default_context()
            return http.client.HTTPSConnection(self._host, self._port, timeout=t, context=ctx)
        return http.client.HTTPConnection(self._host, self._port, timeout=t)

    def _take(self) -> Tuple[Connection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self.new_connection(), False

    def _give(self, conn: Connection) -> None:
        with self._lock:
            if len(self._idle) < self._max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        resend_stale: bool = True,
        conn: Optional[Connection] = None,
    ) -> Any:
        """Send one request and answer its decoded JSON body.

        Raises an APIError subclass for a 4xx/5xx answer and NetworkError
        when no answer came. A request on a kept-alive connection that the
        server had closed is sent again on a new one when resend_stale.
        With conn, that connection is used (and not pooled): the caller may
        close its socket from another thread to abandon the call.
        """
        target = self._prefix + path
        if query:
            q = urllib.parse.urlencode([(k, v) for k, v in _query_pairs(query)])
            if q:
                target += "?" + q
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        if conn is not None:
            return self._send(conn, method, target, data, timeout)
        for _ in range(2):
            c, reused = self._take()
            try:
                out = self._send(c, method, target, data, timeout)
            except NetworkError as e:
                c.close()
                if reused and resend_stale and isinstance(e.__cause__, _STALE):
                    continue
                raise
            except BaseException:
                c.close()
                raise
            self._give(c)
            return out
        raise NetworkError(f"{method} {target}: connection closed")  # pragma: no cover

    def _send(self, c: Connection, method: str, target: str, data: Optional[bytes], timeout: Optional[float]) -> Any:
        try:
            t = self.timeout if timeout is None else timeout
            c.timeout = t
            if c.sock is not None:
                c.sock.settimeout(t)
            c.request(method, target, body=data, headers=self._headers)
            res = c.getresponse()
            raw = res.read()
        except (OSError, http.client.HTTPException) as e:
            raise NetworkError(f"{method} {self.url}{target}: {e or type(e).__name__}") from e
        if res.getheader("Connection", "").lower() == "close":
            c.close()
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = None
        if res.status >= 400:
            raise error_from_answer(res.status, answer)
        if answer is None and raw:
            raise NetworkError(f"{method} {self.url}{target}: HTTP {res.status}: not JSON: {raw[:200]!r}")
        return answer


def _query_pairs(query: Dict[str, Any]) -> List[Tuple[str, str]]:
    pairs: List[Tuple[str, str]] = []
    for k, v in query.items():
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            pairs.extend((k, _qs(x)) for x in v)
        else:
            pairs.append((k, _qs(v)))
    return pairs


def _qs(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if hasattr(v, "isoformat"):
        from .jobs import format_time

        return format_time(v)
    return str(v)


def abort(conn: Connection) -> None:
    """Break a call in flight on conn from another thread."""
    sock = conn.sock
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
