"""Errors the client raises, one class per error code of the HTTP API."""
from typing import Any, Dict, Optional, Type


class SkiplockError(Exception):
    """Base class of every error this package raises."""


class NetworkError(SkiplockError):
    """The server could not be reached, or the connection broke before an answer."""


class APIError(SkiplockError):
    """The server answered an error: ``{"error": {"code", "message", "field"}}``.

    ``status`` is the HTTP status, ``code`` the API's error code
    (``invalid_argument``, ``not_found``, ``conflict``, …), ``field`` the
    input at fault when one is (``priority``, ``jobs[3].run_at``) or None.
    """

    def __init__(self, status: int, code: str, message: str, field: Optional[str] = None) -> None:
        super().__init__(f"{code}: {message}" + (f" (field {field})" if field else ""))
        self.status = status
        self.code = code
        self.message = message
        self.field = field


class InvalidArgument(APIError):
    """400: malformed input, a wrong type, out of range, an unknown field."""


class Unauthenticated(APIError):
    """401: missing or unknown token."""


class PermissionDenied(APIError):
    """403: the token's role or tenant scope does not allow the call."""


class NotFound(APIError):
    """404: unknown job, workflow, schedule, queue or route."""


class MethodNotAllowed(APIError):
    """405: the route exists, not with that method."""


class Conflict(APIError):
    """409: wrong state for the action, or a lost lease (a fenced report refused)."""


class PayloadTooLarge(APIError):
    """413: a payload, result, checkpoint or body over the server's limit."""


class Unavailable(APIError):
    """503: the database does not answer or refuses writes."""


_BY_CODE: Dict[str, Type[APIError]] = {
    "invalid_argument": InvalidArgument,
    "unauthenticated": Unauthenticated,
    "permission_denied": PermissionDenied,
    "not_found": NotFound,
    "method_not_allowed": MethodNotAllowed,
    "conflict": Conflict,
    "payload_too_large": PayloadTooLarge,
    "unavailable": Unavailable,
}

_BY_STATUS: Dict[int, Type[APIError]] = {
    400: InvalidArgument,
    401: Unauthenticated,
    403: PermissionDenied,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    503: Unavailable,
}


def error_from_answer(status: int, body: Any) -> APIError:
    """The typed error for an error answer; its body need not be well formed."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        err = {}
    code = _str(err.get("code"))
    message = _str(err.get("message"))
    field = _str(err.get("field")) or None
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or APIError
    return cls(status, code or f"http_{status}", message or f"HTTP {status}", field)


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def is_transient(err: BaseException) -> bool:
    """Whether a call that raised err may succeed if sent again later:
    a network error, 503, or another 5xx."""
    if isinstance(err, NetworkError):
        return True
    return isinstance(err, APIError) and (err.status == 503 or err.status >= 500)
