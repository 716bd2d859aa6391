"""Client: every call of the HTTP API, for producers, admins and workers."""
import datetime as _dt
import json
import logging
import ssl
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union
from urllib.parse import quote

from ._transport import Connection, Transport
from .jobs import Claim, Heartbeat, Job, JobSpec, Page, Report, TimeLike, Workflow, format_time, seconds

Spec = Union[JobSpec, Mapping[str, Any]]
States = Union[str, Sequence[str], None]

DEFAULT_TIMEOUT = 30.0
"""Seconds a call may take before it raises NetworkError (a long-poll claim
gets its wait on top)."""


class Client:
    """A connection to one ``skiplock serve``; safe to share between threads.

    ``url`` is the server's base URL (``http://127.0.0.1:8080``); ``token``
    a bearer token; ``tenant`` the tenant given to enqueues, lists and
    schedules that name none; ``ssl_context`` the TLS settings of an https
    URL (default: the system's trust store); ``timeout`` seconds per call.
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080",
        *,
        token: Optional[str] = None,
        tenant: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        ssl_context: Optional[ssl.SSLContext] = None,
        logger: Optional[logging.Logger] = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout: must be more than 0 seconds")
        self.log = logger or logging.getLogger("skiplock")
        self.tenant = tenant
        self.transport = Transport(url, token, timeout, ssl_context, self.log)

    @property
    def url(self) -> str:
        return self.transport.url

    def close(self) -> None:
        """Close the kept-alive connections."""
        self.transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # Producers.

    def enqueue(self, kind: str, payload: Optional[Mapping[str, Any]] = None, **opts: Any) -> Job:
        """Enqueue one job; ``opts`` are JobSpec's keyword arguments. A
        duplicate under its idempotency key answers the existing job with
        ``duplicate`` True."""
        body = JobSpec(kind, payload, **opts).to_json(self.tenant)
        retry = body.get("idempotency_key") is not None
        a = self.transport.request("POST", "/v1/jobs", body, resend_stale=retry)
        return Job(a["job"], duplicate=bool(a.get("duplicate")))

    def enqueue_many(self, specs: Iterable[Spec]) -> List[Job]:
        """Enqueue 1 to 10,000 jobs in one call, all or nothing; answers them
        in order. A spec is a JobSpec or a dict of the API's fields."""
        body = {"jobs": [self._spec(s) for s in specs]}
        a = self.transport.request("POST", "/v1/jobs/batch", body, resend_stale=False)
        return [Job(j) for j in a["jobs"]]

    def _spec(self, s: Spec) -> Dict[str, Any]:
        if isinstance(s, JobSpec):
            return s.to_json(self.tenant)
        d = dict(s)
        if self.tenant is not None and "tenant" not in d:
            d["tenant"] = self.tenant
        return d

    def get(self, job_id: int) -> Job:
        return Job(self.transport.request("GET", f"/v1/jobs/{int(job_id)}")["job"])

    def list_jobs(
        self,
        *,
        state: States = None,
        kind: Optional[str] = None,
        queue: Optional[str] = None,
        tenant: Optional[str] = None,
        workflow_id: Optional[str] = None,
        tag: Union[str, Sequence[str], None] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        payload: Optional[Mapping[str, Any]] = None,
        worker_id: Optional[str] = None,
        error_type: Optional[str] = None,
        error_message: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        created_after: Optional[TimeLike] = None,
        created_before: Optional[TimeLike] = None,
        finished_after: Optional[TimeLike] = None,
        finished_before: Optional[TimeLike] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page:
        """One page of jobs, newest first, live and archived. ``metadata``
        and ``payload`` keep jobs whose metadata or payload has each key with
        that value (a dotted payload key, ``order.id``, reaches into
        objects); ``error_message`` jobs with an attempt error whose message
        contains the text, letters compared without case."""
        q: Dict[str, Any] = {
            "state": ",".join([state] if isinstance(state, str) else state) if state else None,
            "kind": kind, "queue": queue,
            "tenant": tenant if tenant is not None else self.tenant,
            "workflow_id": workflow_id,
            "tag": [tag] if isinstance(tag, str) else tag,
            "metadata": _pairs(metadata), "payload": _pairs(payload), "worker_id": worker_id,
            "error_type": error_type, "error_message": error_message,
            "idempotency_key": idempotency_key,
            "created_after": created_after, "created_before": created_before,
            "finished_after": finished_after, "finished_before": finished_before,
            "limit": limit, "cursor": cursor or None,
        }
        a = self.transport.request("GET", "/v1/jobs", query=q)
        return Page([Job(j) for j in a["jobs"]], a.get("next_cursor") or "")

    def iter_jobs(self, **filters: Any) -> Iterator[Job]:
        """Every job list_jobs(**filters) selects, page after page (``limit``
        is the page size), following next_cursor."""
        cursor = filters.pop("cursor", None)
        while True:
            page = self.list_jobs(cursor=cursor, **filters)
            yield from page.jobs
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def cancel(self, job_id: int) -> Job:
        """Cancel a job; a running one ends cancelled when its worker reports."""
        return self._action(job_id, "cancel")

    def retry(self, job_id: int) -> Job:
        """Make a failed or cancelled job pending again."""
        return self._action(job_id, "retry")

    def pause(self, job_id: int) -> Job:
        """Pause a job; a running one is asked to pause through its heartbeats."""
        return self._action(job_id, "pause")

    def resume(self, job_id: int) -> Job:
        return self._action(job_id, "resume")

    def _action(self, job_id: int, action: str) -> Job:
        return Job(self.transport.request("POST", f"/v1/jobs/{int(job_id)}/{action}", {})["job"])

    def bulk(
        self,
        action: str,
        *,
        state: States = None,
        kind: Union[str, Sequence[str], None] = None,
        queue: Union[str, Sequence[str], None] = None,
        tenant: Optional[str] = None,
        older_than: Union[float, _dt.timedelta, None] = None,
        error_type: Optional[str] = None,
        error_message: Optional[str] = None,
        ids: Optional[Sequence[int]] = None,
        payload: Optional[Mapping[str, Any]] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        dry_run: bool = False,
    ) -> Dict[str, Any]:
        """``retry``, ``cancel``, ``delete``, ``pause`` or ``resume`` every job
        the filter picks; answers ``{"action", "matched", "done"}``."""
        f: Dict[str, Any] = {}
        for k, v in (("state", state), ("kind", kind), ("queue", queue)):
            if v is not None:
                f[k] = [v] if isinstance(v, str) else list(v)
        if tenant is not None:
            f["tenant"] = tenant
        if older_than is not None:
            f["older_than_seconds"] = seconds(older_than)
        for k, v in (("error_type", error_type), ("error_message", error_message)):
            if v is not None:
                f[k] = v
        if ids is not None:
            f["ids"] = [int(i) for i in ids]
        for k, m in (("payload", payload), ("metadata", metadata)):
            if m is not None:
                f[k] = dict(m)
        body: Dict[str, Any] = {"action": action, "filter": f}
        if dry_run:
            body["dry_run"] = True
        return dict(self.transport.request("POST", "/v1/jobs/bulk", body, resend_stale=False))

    def workflow(self, workflow_id: str) -> Workflow:
        return Workflow(self.transport.request("GET", "/v1/workflows/" + quote(workflow_id, safe="")))

    # Schedules, queues and the rest.

    def schedules(self, tenant: Optional[str] = None) -> List[Dict[str, Any]]:
        a = self.transport.request("GET", "/v1/schedules", query={"tenant": self._tenant(tenant)})
        return list(a["schedules"])

    def put_schedule(
        self,
        key: str,
        kind: str,
        every: Union[float, _dt.timedelta],
        *,
        payload: Optional[Mapping[str, Any]] = None,
        queue: Optional[str] = None,
        next_run_at: Optional[TimeLike] = None,
        tenant: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Add or replace the schedule under key: enqueue kind every ``every``
        seconds from next_run_at (default now)."""
        body: Dict[str, Any] = {"kind": kind, "every_seconds": seconds(every)}
        if payload is not None:
            body["payload"] = dict(payload)
        if queue is not None:
            body["queue"] = queue
        if next_run_at is not None:
            body["next_run_at"] = format_time(next_run_at)
        a = self.transport.request("PUT", "/v1/schedules/" + quote(key, safe=""), body,
                                   query={"tenant": self._tenant(tenant)})
        return dict(a["schedule"])

    def delete_schedule(self, key: str, tenant: Optional[str] = None) -> None:
        self.transport.request("DELETE", "/v1/schedules/" + quote(key, safe=""), query={"tenant": self._tenant(tenant)})

    def _tenant(self, tenant: Optional[str]) -> Optional[str]:
        return tenant if tenant is not None else self.tenant

    def queues(self) -> List[Dict[str, Any]]:
        return list(self.transport.request("GET", "/v1/queues")["queues"])

    def pause_queue(self, queue: str, create: bool = False) -> Dict[str, Any]:
        return self._queue_action(queue, "pause", create)

    def resume_queue(self, queue: str, create: bool = False) -> Dict[str, Any]:
        return self._queue_action(queue, "resume", create)

    def _queue_action(self, queue: str, action: str, create: bool) -> Dict[str, Any]:
        body = {"create": True} if create else {}
        return dict(self.transport.request("POST", f"/v1/queues/{quote(queue, safe='')}/{action}", body)["queue"])

    def kinds(self) -> Dict[str, Any]:
        return dict(self.transport.request("GET", "/v1/kinds"))

    def stats(self) -> Dict[str, Any]:
        return dict(self.transport.request("GET", "/v1/stats"))

    def health(self) -> Dict[str, Any]:
        """``GET /healthz``; raises Unavailable while the database does not answer."""
        return dict(self.transport.request("GET", "/healthz"))

    # Workers: the calls Worker makes, for workers of one's own.

    def claim(
        self,
        queue: str,
        worker_id: str,
        *,
        max: int = 1,
        lease_seconds: Optional[float] = None,
        wait_seconds: float = 0,
        kinds: Optional[Sequence[str]] = None,
        fields: Optional[Sequence[str]] = None,
        complete: Optional[Sequence[Mapping[str, Any]]] = None,
        conn: Optional[Connection] = None,
    ) -> Claim:
        """Claim up to max jobs of queue, waiting up to wait_seconds for
        work; ``complete`` reports finished jobs ({id, attempt, queue,
        result}) in the same transaction, before the claim."""
        body: Dict[str, Any] = {"worker_id": worker_id, "max": max}
        if lease_seconds is not None:
            body["lease_seconds"] = lease_seconds
        if wait_seconds:
            body["wait_seconds"] = wait_seconds
        if kinds:
            body["kinds"] = list(kinds)
        if fields is not None:
            body["fields"] = list(fields)
        if complete:
            body["complete"] = list(complete)
        a = self.transport.request("POST", f"/v1/queues/{quote(queue, safe='')}/claim", body,
                                   timeout=self.transport.timeout + wait_seconds, conn=conn)
        return Claim(a)

    def heartbeat(
        self,
        job_id: int,
        worker_id: str,
        attempt: Optional[int],
        *,
        lease_seconds: Optional[float] = None,
        progress: Optional[int] = None,
        progress_message: Optional[str] = None,
        checkpoint: Any = None,
        queue: Optional[str] = None,
    ) -> Heartbeat:
        """Extend the lease and report progress; raises Conflict when the
        lease is no longer this worker's. ``queue`` (here and in every
        report) is the job's queue as the claim answered it: on a
        distributed (Citus) schema it sends the report to that queue's
        shard."""
        body = _report(worker_id, attempt, queue)
        for k, v in (("lease_seconds", lease_seconds), ("progress", progress),
                     ("progress_message", progress_message), ("checkpoint", checkpoint)):
            if v is not None:
                body[k] = v
        return Heartbeat(self.transport.request("POST", f"/v1/jobs/{int(job_id)}/heartbeat", body))

    def complete(
        self, job_id: int, worker_id: str, attempt: Optional[int], result: Any = None,
        next: Optional[Sequence[Spec]] = None, *, queue: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Complete one job, inserting the ``next`` jobs in the same
        transaction; answers ``{"job": Job, "next": [Job]}``."""
        body = _report(worker_id, attempt, queue)
        if result is not None:
            body["result"] = result
        if next:
            body["next"] = [self._spec(s) for s in next]
        a = self.transport.request("POST", f"/v1/jobs/{int(job_id)}/complete", body)
        return {"job": Job(a["job"]), "next": [Job(j) for j in a.get("next") or []]}

    def complete_many(self, worker_id: str, jobs: Sequence[Mapping[str, Any]]) -> List[Report]:
        """Complete 1 to 1,000 jobs ({id, attempt, queue, result}) in one
        call; each is fenced on its own and answers a Report."""
        a = self.transport.request("POST", "/v1/jobs/complete", {"worker_id": worker_id, "jobs": list(jobs)})
        return [Report(r) for r in a["results"]]

    def fail(
        self,
        job_id: int,
        worker_id: str,
        attempt: Optional[int],
        error_type: str,
        message: str,
        *,
        retryable: bool = True,
        retry_in: Union[float, _dt.timedelta, None] = None,
        queue: Optional[str] = None,
    ) -> Job:
        """Report a failed attempt: the job is scheduled again (after the
        server's backoff, or retry_in) while retryable and retries are left,
        else it ends failed."""
        body = _report(worker_id, attempt, queue)
        body["error"] = {"type": error_type, "message": message}
        body["retryable"] = retryable
        if retry_in is not None:
            body["retry_in_seconds"] = seconds(retry_in)
        return Job(self.transport.request("POST", f"/v1/jobs/{int(job_id)}/fail", body)["job"])


def _report(worker_id: str, attempt: Optional[int], queue: Optional[str] = None) -> Dict[str, Any]:
    body: Dict[str, Any] = {"worker_id": worker_id}
    if attempt is not None:
        body["attempt"] = attempt
    if queue:
        body["queue"] = queue
    return body


def _pairs(m: Optional[Mapping[str, Any]]) -> Optional[List[str]]:
    """KEY:VALUE query values: a string as itself, any other value as JSON."""
    if not m:
        return None
    return [f"{k}:{v if isinstance(v, str) else json.dumps(v)}" for k, v in m.items()]
