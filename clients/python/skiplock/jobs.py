"""The API's records as Python objects: jobs, job specs, pages, workflows."""
import datetime as _dt
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

TimeLike = Union[_dt.datetime, str]

_TIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:\d{2})$"
)


def parse_time(value: Any) -> Optional[_dt.datetime]:
    """An RFC 3339 time of the API (up to nanoseconds) as an aware datetime
    (microseconds); None for null. Python 3.9's fromisoformat reads neither
    "Z" nor nine digits of fraction, hence this parser."""
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        return value
    m = _TIME_RE.match(str(value))
    if not m:
        raise ValueError(f"not an RFC 3339 time: {value!r}")
    y, mo, d, h, mi, s, frac, zone = m.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    if zone in ("Z", "z"):
        tz = _dt.timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = _dt.timezone(sign * _dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    year = int(y)
    if year < 1 or year > 9999:
        year = max(1, min(9999, year))
    return _dt.datetime(year, int(mo), int(d), int(h), int(mi), int(s), micro, tzinfo=tz)


def format_time(value: TimeLike) -> str:
    """A datetime as RFC 3339 (naive datetimes are taken as UTC); a string as is."""
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return value.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")


def seconds(value: Union[float, int, _dt.timedelta]) -> float:
    """Seconds from a number or a timedelta."""
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    return float(value)


class Job:
    """A job as the API answers it. Every field of the job object is an
    attribute; times are aware datetimes. A claim that named ``fields``
    answers part of the job: the other attributes are None. ``raw`` is
    the decoded JSON object."""

    __slots__ = (
        "raw", "id", "kind", "op", "queue", "tenant", "state", "priority", "payload", "metadata",
        "tags", "attempt", "max_retries", "run_at", "created_at", "started_at", "finished_at",
        "updated_at", "lease_until", "worker_id", "heartbeat_at", "progress", "progress_message",
        "checkpoint", "result", "errors", "idempotency_key", "depends_on", "workflow_id", "stage",
        "cancel_requested", "pause_requested", "traceparent", "duplicate",
    )

    def __init__(self, raw: Mapping[str, Any], duplicate: bool = False) -> None:
        g = raw.get
        self.raw: Dict[str, Any] = dict(raw)
        self.id: int = int(raw["id"])
        self.kind: Optional[str] = g("kind")
        self.op: Optional[str] = g("op")
        self.queue: Optional[str] = g("queue")
        self.tenant: Optional[str] = g("tenant")
        self.state: Optional[str] = g("state")
        self.priority: Optional[int] = g("priority")
        self.payload: Any = g("payload")
        self.metadata: Any = g("metadata")
        self.tags: List[str] = list(g("tags") or [])
        self.attempt: int = int(g("attempt") or 0)
        self.max_retries: Optional[int] = g("max_retries")
        self.run_at = parse_time(g("run_at"))
        self.created_at = parse_time(g("created_at"))
        self.started_at = parse_time(g("started_at"))
        self.finished_at = parse_time(g("finished_at"))
        self.updated_at = parse_time(g("updated_at"))
        self.lease_until = parse_time(g("lease_until"))
        self.worker_id: Optional[str] = g("worker_id")
        self.heartbeat_at = parse_time(g("heartbeat_at"))
        self.progress: Optional[int] = g("progress")
        self.progress_message: Optional[str] = g("progress_message")
        self.checkpoint: Any = g("checkpoint")
        self.result: Any = g("result")
        self.errors: List[Dict[str, Any]] = list(g("errors") or [])
        self.idempotency_key: Optional[str] = g("idempotency_key")
        self.depends_on: List[int] = list(g("depends_on") or [])
        self.workflow_id: Optional[str] = g("workflow_id")
        self.stage: Optional[str] = g("stage")
        self.cancel_requested: bool = bool(g("cancel_requested"))
        self.pause_requested: bool = bool(g("pause_requested"))
        self.traceparent: Optional[str] = g("traceparent")
        self.duplicate: bool = duplicate or bool(g("duplicate"))

    def __repr__(self) -> str:
        return f"Job(id={self.id}, kind={self.kind!r}, state={self.state!r}, attempt={self.attempt})"


class JobSpec:
    """A job to enqueue, for ``Client.enqueue_many`` and ``next`` stages.
    Every argument but kind is optional; None leaves the server's default.
    ``run_at`` is a datetime or RFC 3339 string; ``delay`` seconds or a
    timedelta (not both)."""

    def __init__(
        self,
        kind: str,
        payload: Optional[Mapping[str, Any]] = None,
        *,
        op: Optional[str] = None,
        queue: Optional[str] = None,
        tenant: Optional[str] = None,
        priority: Optional[int] = None,
        run_at: Optional[TimeLike] = None,
        delay: Union[float, _dt.timedelta, None] = None,
        max_retries: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        depends_on: Optional[Sequence[int]] = None,
        run_on_parent_failure: Optional[bool] = None,
        workflow_id: Optional[str] = None,
        stage: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
        metadata: Any = None,
        traceparent: Optional[str] = None,
    ) -> None:
        self.kind = kind
        self.payload = payload
        self.op = op
        self.queue = queue
        self.tenant = tenant
        self.priority = priority
        self.run_at = run_at
        self.delay = delay
        self.max_retries = max_retries
        self.idempotency_key = idempotency_key
        self.depends_on = depends_on
        self.run_on_parent_failure = run_on_parent_failure
        self.workflow_id = workflow_id
        self.stage = stage
        self.tags = tags
        self.metadata = metadata
        self.traceparent = traceparent

    def to_json(self, default_tenant: Optional[str] = None) -> Dict[str, Any]:
        """The request body of this spec."""
        body: Dict[str, Any] = {"kind": self.kind, "payload": dict(self.payload) if self.payload is not None else {}}
        tenant = self.tenant if self.tenant is not None else default_tenant
        for k, v in (
            ("op", self.op), ("queue", self.queue), ("tenant", tenant), ("priority", self.priority),
            ("max_retries", self.max_retries), ("idempotency_key", self.idempotency_key),
            ("run_on_parent_failure", self.run_on_parent_failure), ("workflow_id", self.workflow_id),
            ("stage", self.stage), ("metadata", self.metadata), ("traceparent", self.traceparent),
        ):
            if v is not None:
                body[k] = v
        if self.run_at is not None:
            body["run_at"] = format_time(self.run_at)
        if self.delay is not None:
            body["delay_seconds"] = seconds(self.delay)
        if self.depends_on is not None:
            body["depends_on"] = [int(i) for i in self.depends_on]
        if self.tags is not None:
            body["tags"] = list(self.tags)
        return body


class Page:
    """One page of ``Client.list_jobs``: its jobs, newest first, and the
    cursor of the next page ("" on the last)."""

    __slots__ = ("jobs", "next_cursor")

    def __init__(self, jobs: List[Job], next_cursor: str) -> None:
        self.jobs = jobs
        self.next_cursor = next_cursor


class Workflow:
    """``GET /v1/workflows/{id}``: its jobs oldest first and its state."""

    __slots__ = ("raw", "workflow_id", "state", "jobs", "current_stage", "stages", "counts")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = dict(raw)
        self.workflow_id: str = raw["workflow_id"]
        self.state: str = raw["state"]
        self.jobs = [Job(j) for j in raw.get("jobs") or []]
        self.current_stage: Optional[str] = raw.get("current_stage")
        self.stages: Any = raw.get("stages")
        self.counts: Dict[str, int] = dict(raw.get("counts") or {})


class Report:
    """The outcome of one completion of a batch (``POST /v1/jobs/complete``):
    ``ok``, else the ``code`` and ``message`` the single-job call would have
    answered (``conflict``, ``not_found``)."""

    __slots__ = ("id", "ok", "code", "message")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.id = int(raw["id"])
        self.ok = bool(raw.get("ok"))
        err = raw.get("error") or {}
        self.code: Optional[str] = err.get("code")
        self.message: Optional[str] = err.get("message")

    def __repr__(self) -> str:
        return f"Report(id={self.id}, ok={self.ok}, code={self.code!r})"


class Heartbeat:
    """The answer to a heartbeat."""

    __slots__ = ("lease_until", "cancel_requested", "pause_requested")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.lease_until = parse_time(raw.get("lease_until"))
        self.cancel_requested = bool(raw.get("cancel_requested"))
        self.pause_requested = bool(raw.get("pause_requested"))


class Claim:
    """The answer to a claim: the jobs, and the outcome of each completion
    the claim carried."""

    __slots__ = ("jobs", "completed")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.jobs = [Job(j) for j in raw.get("jobs") or []]
        self.completed = [Report(r) for r in raw.get("completed") or []]
