"""Worker: runs handlers by kind on N threads, claiming jobs in batches
with a long poll, heartbeating, and reporting in batches."""
import logging
import os
import queue as _queue
import signal
import socket
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, Set

from ._heartbeats import Heartbeater
from ._reporter import Backoff, Reporter
from ._transport import Connection, abort
from .client import Client
from .context import (Complete, JobCancelled, JobContext, JobInterrupted, JobPaused, LeaseLost, Permanent, RetryIn,
                      Snooze, WorkerShutdown)
from .errors import APIError, NetworkError, SkiplockError, is_transient
from .jobs import Job, JobSpec

Handler = Callable[[JobContext], Any]

# The job fields a claim asks for: what JobContext offers, a tenth of a whole job.
CLAIM_FIELDS = ("kind", "op", "queue", "tenant", "payload", "metadata", "tags", "max_retries",
                "started_at", "lease_until", "checkpoint", "workflow_id", "stage", "traceparent")

DEFAULT_LEASE = 300.0  # the server's default lease, when a claim answers no lease_until


class Worker:
    """Runs the jobs of one queue with the handlers registered by kind.

    ``concurrency`` jobs run at once, each on its own thread. A claim asks
    for as many jobs as there are free threads (at most ``claim_max``), so
    every job claimed starts at once and a stopping worker holds no job it
    has not started. ``lease_seconds`` is the lease asked for (default:
    each kind's lease on the server); heartbeats go at a third of it.
    ``backoff(attempt) -> seconds`` sets the wait before the retry of a
    failed attempt (default: the server's backoff). ``shutdown_timeout``
    is how long stop() lets running jobs finish; ``report_timeout`` how
    long a stopping worker keeps sending reports the server does not take.
    """

    def __init__(
        self,
        client: Client,
        queue: str = "default",
        *,
        concurrency: int = 10,
        worker_id: Optional[str] = None,
        lease_seconds: Optional[float] = None,
        claim_max: int = 1000,
        wait_seconds: float = 30.0,
        backoff: Optional[Callable[[int], float]] = None,
        shutdown_timeout: float = 30.0,
        report_timeout: float = 30.0,
        report_interval: float = 0.05,
        report_batch: int = 1000,
        logger: Optional[logging.Logger] = None,
    ) -> None:
        for name, v, lo, hi in (("concurrency", concurrency, 1, 10000), ("claim_max", claim_max, 1, 1000),
                                ("wait_seconds", wait_seconds, 0, 60), ("report_batch", report_batch, 1, 1000)):
            if not lo <= v <= hi:
                raise ValueError(f"{name}: must be from {lo} to {hi}, got {v}")
        if lease_seconds is not None and lease_seconds < 1:
            raise ValueError(f"lease_seconds: must be at least 1, got {lease_seconds}")
        self.client = client
        self.queue = queue
        self.concurrency = concurrency
        self.worker_id = worker_id or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.lease_seconds = lease_seconds
        self.claim_max = claim_max
        self.wait_seconds = wait_seconds
        self.backoff = backoff
        self.shutdown_timeout = shutdown_timeout
        self.report_timeout = report_timeout
        self.log: logging.Logger = logger or client.log
        self._handlers: Dict[str, Handler] = {}
        self._reporter = Reporter(client, self.worker_id, self.log, report_interval, report_batch)
        self._beats = Heartbeater(self)
        self._cond = threading.Condition()
        self._running: Dict[int, JobContext] = {}
        self._jobs: "_queue.Queue[Optional[JobContext]]" = _queue.Queue()
        self._stopping = threading.Event()
        self._done = threading.Event()
        self._claim_conns: Set[Connection] = set()  # the claims in flight, to abandon on stop
        self._reserved = 0  # threads kept for the jobs of the claims in flight
        # Two claim loops, each asking for half the threads, so that one
        # claim travels while the jobs of the other run.
        self._claimers = min(2, concurrency)
        self._share = -(-concurrency // self._claimers)
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None
        self.started_jobs = 0

    # Handlers.

    def handle(self, kind: str, fn: Optional[Handler] = None) -> Any:
        """Register fn for kind: ``worker.handle("email", send)`` or as a
        decorator, ``@worker.handle("email")``. fn(job: JobContext) returns
        the job's result (any JSON value) or raises."""
        if fn is None:
            def deco(f: Handler) -> Handler:
                self.handle(kind, f)
                return f
            return deco
        if not kind:
            raise ValueError("kind: must not be empty")
        self._handlers[kind] = fn
        return fn

    # Lifecycle. Shutdown order (stop, then _shutdown): stop claiming and
    # abandon a claim in flight (the server gives its jobs back, attempt
    # unspent); let running jobs finish until shutdown_timeout; interrupt
    # the rest with WorkerShutdown and hand them back (failed as retryable,
    # retry in 0 s); send every report left; end the threads.

    def run(self, handle_signals: bool = True) -> None:
        """Run until stop() (or SIGTERM/SIGINT, when handle_signals and
        called from the main thread), then drain and return. Raises the
        error that stopped the worker, if one did (a refused claim: a bad
        token, a wrong queue)."""
        old: Dict[signal.Signals, Any] = {}
        if handle_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                old[sig] = signal.signal(sig, self._on_signal)
        try:
            self.start()
            while not self._done.wait(0.2):
                pass
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)
        if self._error is not None:
            raise self._error

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.log.info("worker %s: stopping on signal %d", self.worker_id, signum,
            extra={"signal": signum, "worker_id": self.worker_id})
        self.stop()

    def start(self) -> None:
        """Start the worker's threads and return; stop() and join() end it."""
        if not self._handlers:
            raise ValueError("no handlers: register one with handle(kind, fn)")
        if self._thread is not None:
            raise RuntimeError("worker already started")
        for i in range(self.concurrency):
            threading.Thread(target=self._execute, name=f"skiplock-job-{i}", daemon=True).start()
        self._reporter.start()
        self._beats.start()
        self._thread = threading.Thread(target=self._main, name="skiplock-claim", daemon=True)
        self._thread.start()
        self.log.info("worker %s started on queue %s", self.worker_id, self.queue,
            extra={"worker_id": self.worker_id, "queue": self.queue, "kinds": sorted(self._handlers),
                   "concurrency": self.concurrency})

    def stop(self) -> None:
        """Ask the worker to stop (safe from any thread, a handler or a
        signal handler, and to call twice); join() waits for the drain."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
            conns = list(self._claim_conns)
        for conn in conns:
            abort(conn)

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait until the worker has drained and stopped; True when it has."""
        return self._done.wait(timeout)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def running(self) -> List[JobContext]:
        with self._cond:
            return list(self._running.values())

    @property
    def completed(self) -> int:
        """Jobs whose completion the server took."""
        return self._reporter.completed

    def _main(self) -> None:
        loops = [threading.Thread(target=self._claimer, name=f"skiplock-claim-{i}", daemon=True)
                 for i in range(self._claimers)]
        for t in loops:
            t.start()
        for t in loops:
            t.join()
        try:
            self._shutdown()
        finally:
            self._done.set()

    def _claimer(self) -> None:
        try:
            self._claim_loop()
        except BaseException as e:  # a refused claim: stop, drain, and let run() raise it
            if self._error is None:
                self._error = e
                self.log.error("worker %s stops: claim refused: %s", self.worker_id, e,
                               extra={"worker_id": self.worker_id, "error": str(e)})
            self.stop()

    # Claims.

    def _claim_loop(self) -> None:
        backoff = Backoff()
        kinds = sorted(self._handlers)
        conn: Optional[Connection] = None
        try:
            while not self._stopping.is_set():
                if conn is None:
                    conn = self._connect(backoff)
                    if conn is None:
                        continue
                if not self._claim_once(conn, kinds, backoff):
                    with self._cond:
                        self._claim_conns.discard(conn)
                    conn.close()
                    conn = None
        finally:
            if conn is not None:
                with self._cond:
                    self._claim_conns.discard(conn)
                conn.close()

    def _connect(self, backoff: Backoff) -> Optional[Connection]:
        """A connection for claims, connected: stop() can then always
        abandon a claim on it by shutting its socket."""
        conn = self.client.transport.new_connection()
        try:
            conn.connect()
        except OSError as e:
            conn.close()
            self._pause(backoff, NetworkError(f"connect to {self.client.url}: {e}"))
            return None
        with self._cond:
            self._claim_conns.add(conn)
        if self._stopping.is_set():  # stop() came before the connection was in the set
            abort(conn)
        return conn

    def _claim_once(self, conn: Connection, kinds: List[str], backoff: Backoff) -> bool:
        """One claim on conn, carrying the completions waiting; False when
        the connection is to be dropped."""
        n = self._wait_free()
        if n == 0:
            return True
        carried = self._reporter.take(1000)
        try:
            claim = self.client.claim(self.queue, self.worker_id, max=n, lease_seconds=self.lease_seconds,
                                      wait_seconds=self.wait_seconds, kinds=kinds, fields=CLAIM_FIELDS,
                                      complete=carried, conn=conn)
        except SkiplockError as e:
            self._release(n)
            self._claim_failed(e, carried, backoff)
            return False
        backoff.reset()
        self._reporter.settle(carried, claim.completed)
        for job in claim.jobs:
            self._dispatch(job)
        self._release(n)
        return True

    def _claim_failed(self, e: SkiplockError, carried: List[Dict[str, Any]], backoff: Backoff) -> None:
        if isinstance(e, APIError) and not is_transient(e):
            # Perhaps a result the server refuses: the reporter sends those
            # on its own and sorts them out; the claim goes again without.
            self._reporter.settle(carried, None, solo=True)
            if carried:
                return
            raise e
        self._reporter.settle(carried, None)
        if not self._stopping.is_set():
            self._pause(backoff, e)

    def _free(self) -> int:
        return self.concurrency - len(self._running) - self._reserved

    def _wait_free(self) -> int:
        """Wait for a free thread, then a moment for more (jobs of one batch
        end together), and keep them for a claim: answer how many."""
        with self._cond:
            while self._free() <= 0 and not self._stopping.is_set():
                self._cond.wait()
            deadline = time.monotonic() + 0.01
            while (self._free() < self._share and len(self._running) > 0 and not self._stopping.is_set()
                   and time.monotonic() < deadline):
                self._cond.wait(max(0.0, deadline - time.monotonic()))
            if self._stopping.is_set():
                return 0
            n = max(0, min(self.claim_max, self._share, self._free()))
            self._reserved += n
            return n

    def _release(self, n: int) -> None:
        with self._cond:
            self._reserved -= n
            self._cond.notify_all()

    def _pause(self, backoff: Backoff, err: BaseException) -> None:
        d = backoff.next()
        self.log.warning("claim failed, retrying in %.2fs: %s", d, err,
            extra={"worker_id": self.worker_id, "error": str(err), "retry_in": round(d, 3)})
        self._stopping.wait(d)

    def _dispatch(self, job: Job) -> None:
        lease = self.lease_seconds
        if lease is None:
            lease = DEFAULT_LEASE
            if job.lease_until is not None and job.started_at is not None:
                lease = max(1.0, (job.lease_until - job.started_at).total_seconds())
        ctx = JobContext(job, self, lease)
        with self._cond:
            self._running[job.id] = ctx
            self.started_jobs += 1
        self._jobs.put(ctx)

    # Jobs.

    def _execute(self) -> None:
        while True:
            ctx = self._jobs.get()
            if ctx is None:
                return
            try:
                self._run_one(ctx)
            finally:
                with self._cond:
                    self._running.pop(ctx.id, None)
                    self._cond.notify_all()

    def _run_one(self, ctx: JobContext) -> None:
        fn = self._handlers.get(ctx.kind)
        try:
            if fn is None:
                raise Permanent(f"no handler for kind {ctx.kind!r}", type="unknown_kind")
            result = fn(ctx)
        except BaseException as e:  # every outcome is a report, SystemExit in a handler too
            self._report_error(ctx, e)
            return
        if ctx.reason == LeaseLost.reason or ctx.reported:
            self.log.warning("job %d: finished after its lease was lost; not reported", ctx.id, extra=self._f(ctx))
            return
        ctx.reported = True
        if isinstance(result, Complete):
            if result.next:
                nxt = [s.to_json() if isinstance(s, JobSpec) else dict(s) for s in result.next]
                self._reporter.complete_next(ctx.id, ctx.attempt, result.result, nxt, queue=ctx.job.queue)
                return
            result = result.result
        self._reporter.complete(ctx.id, ctx.attempt, result, queue=ctx.job.queue)

    def _report_error(self, ctx: JobContext, e: BaseException) -> None:
        if isinstance(e, LeaseLost) or ctx.reported:
            self.log.warning("job %d: stopped, its lease is lost", ctx.id, extra=self._f(ctx))
            return
        retryable, retry_in, etype = True, None, type(e).__name__
        if isinstance(e, JobCancelled):
            retryable, etype = False, "cancelled"
        elif isinstance(e, JobPaused):
            etype = "paused"
        elif isinstance(e, WorkerShutdown):
            retry_in, etype = 0.0, "worker_shutdown"
        elif isinstance(e, Permanent):
            retryable, etype = False, e.type
        elif isinstance(e, Snooze):
            retry_in, etype = e.delay, "snooze"
        elif isinstance(e, RetryIn):
            retry_in, etype = e.delay, e.type
        elif self.backoff is not None:
            retry_in = max(0.0, float(self.backoff(ctx.attempt)))
        level = logging.INFO if isinstance(e, (JobInterrupted, Snooze)) else logging.WARNING
        self.log.log(level, "job %d (%s) attempt %d failed: %s", ctx.id, ctx.kind, ctx.attempt, e,
            extra={**self._f(ctx), "error": str(e), "retryable": retryable},
            exc_info=level == logging.WARNING and not isinstance(e, (Permanent, RetryIn)))
        ctx.reported = True
        message = str(e) or etype
        self._reporter.fail(ctx.id, ctx.attempt, etype, message, retryable, retry_in, queue=ctx.job.queue)

    def _beat(self, ctx: JobContext) -> None:
        self._beats.beat(ctx)

    def _f(self, ctx: JobContext) -> Dict[str, Any]:
        return {"job_id": ctx.id, "kind": ctx.kind, "queue": self.queue, "attempt": ctx.attempt}

    # Shutdown.

    def _shutdown(self) -> None:
        deadline = time.monotonic() + self.shutdown_timeout
        with self._cond:
            while self._running and time.monotonic() < deadline:
                self._cond.wait(max(0.0, min(0.2, deadline - time.monotonic())))
            late = list(self._running.values())
        for ctx in late:
            ctx.interrupt(WorkerShutdown)
        if late:  # a moment for handlers that check to stop and report themselves
            with self._cond:
                grace = time.monotonic() + 1.0
                while self._running and time.monotonic() < grace:
                    self._cond.wait(0.05)
                late = list(self._running.values())
        for ctx in late:
            if not ctx.reported:
                ctx.reported = True
                self.log.warning("job %d: still running at the drain deadline; handed back", ctx.id, extra=self._f(ctx))
                self._reporter.fail(ctx.id, ctx.attempt, "worker_shutdown", "the worker stopped before the job ended",
                                    True, 0.0, queue=ctx.job.queue)
        self._beats.stop()
        self._reporter.close(time.monotonic() + self.report_timeout)
        for _ in range(self.concurrency):
            self._jobs.put(None)
        self.log.info("worker %s stopped", self.worker_id,
            extra={"worker_id": self.worker_id, "completed": self._reporter.completed, "unfinished": len(late)})
