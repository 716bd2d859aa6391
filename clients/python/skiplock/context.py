"""What a handler gets (JobContext) and the exceptions that say how a job ends."""
import threading
import time
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Tuple, Type, Union

import datetime as _dt

from .errors import SkiplockError
from .jobs import Job, JobSpec, seconds

if TYPE_CHECKING:
    from .worker import Worker


class JobInterrupted(SkiplockError):
    """Raised inside a handler, at its next checkpoint (``JobContext.check``,
    ``sleep``, ``progress``, ``save_checkpoint``, ``heartbeat``), when the
    job must stop. A handler lets it propagate (cleaning up in ``finally``)."""

    reason = "interrupted"


class JobCancelled(JobInterrupted):
    """The job was cancelled while it ran; the worker reports it and it ends cancelled."""

    reason = "cancelled"


class JobPaused(JobInterrupted):
    """The job was paused while it ran; the worker reports it and it becomes
    paused, its checkpoint kept and its attempt unspent, until resumed."""

    reason = "paused"


class LeaseLost(JobInterrupted):
    """The worker's lease on the job ran out (a heartbeat answered 409): the
    job is someone else's now and this attempt is not reported."""

    reason = "lease_lost"


class WorkerShutdown(JobInterrupted):
    """The worker is stopping and its drain deadline passed: the job is
    handed back (failed as retryable, to run again at once)."""

    reason = "worker_shutdown"


class Permanent(Exception):
    """Raise to fail the job without a retry: ``raise Permanent("bad input")``
    or ``raise Permanent(err) from err``. ``type`` names the error in the
    job's errors (default: the wrapped exception's class, else "Permanent")."""

    def __init__(self, error: Union[str, BaseException], type: Optional[str] = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.type = type or (error.__class__.__name__ if isinstance(error, BaseException) else "Permanent")


class Snooze(Exception):
    """Raise to run the job again after ``delay`` (seconds or a timedelta).
    Over HTTP a snooze is a retryable failure with ``retry_in_seconds``: it
    spends an attempt and adds a ``snooze`` entry to the job's errors."""

    def __init__(self, delay: Union[float, _dt.timedelta] = 0) -> None:
        self.delay = seconds(delay)
        super().__init__(f"snoozed for {self.delay:g}s")


class RetryIn(Exception):
    """Raise to fail this attempt as retryable and run the next one after
    ``delay`` instead of the backoff: ``raise RetryIn(30, "rate limited")``."""

    def __init__(self, delay: Union[float, _dt.timedelta], message: str = "", type: str = "RetryIn") -> None:
        self.delay = seconds(delay)
        self.type = type
        super().__init__(message or f"retry in {self.delay:g}s")


class Complete:
    """Return ``Complete(result, next=[JobSpec(...), …])`` from a handler to
    complete the job and insert the next jobs (a workflow's next stage) in
    the same transaction; they inherit the job's workflow_id and tenant.
    Such a completion goes in a call of its own, not in a batch."""

    def __init__(self, result: Any = None,
                 next: Optional[Sequence[Union[JobSpec, Mapping[str, Any]]]] = None) -> None:
        self.result = result
        self.next = list(next or [])


class JobContext:
    """The job a handler works on, and its line to the worker: progress and
    checkpoints (sent with the next heartbeat) and the interruptions the
    heartbeats bring back (cancel, pause, a lost lease, a shutdown).

    Python cannot stop a thread from outside, so an interruption is raised
    in the handler at its next checkpoint: a call of ``check``, ``sleep``,
    ``progress``, ``save_checkpoint`` or ``heartbeat``. ``interrupted`` is a
    threading.Event for handlers that wait on something else.
    """

    def __init__(self, job: Job, worker: "Worker", lease: float) -> None:
        self.job = job
        self.worker_id = worker.worker_id
        self._worker = worker
        self.lease = lease
        self.started = time.monotonic()
        self.last_beat = self.started
        self.interrupted = threading.Event()
        self._why: Optional[Type[JobInterrupted]] = None
        self._lock = threading.Lock()
        self._progress: Optional[int] = None
        self._message: Optional[str] = None
        self._checkpoint: Any = None
        self._checkpoint_dirty = False
        self._saved = False
        self.reported = False  # a report of this attempt was queued

    @property
    def id(self) -> int:
        return self.job.id

    @property
    def kind(self) -> str:
        return self.job.kind or ""

    @property
    def payload(self) -> Any:
        return self.job.payload

    @property
    def attempt(self) -> int:
        return self.job.attempt

    @property
    def traceparent(self) -> Optional[str]:
        """The W3C trace context the job was enqueued with, to continue its trace."""
        return self.job.traceparent

    @property
    def checkpoint(self) -> Any:
        """The checkpoint saved by this attempt, else by the one before (to resume from)."""
        with self._lock:
            return self._checkpoint if self._saved else self.job.checkpoint

    @property
    def reason(self) -> Optional[str]:
        """Why the job must stop ("cancelled", "paused", "lease_lost",
        "worker_shutdown"), or None."""
        return self._why.reason if self._why else None

    def interrupt(self, why: Type[JobInterrupted]) -> None:
        """Ask the handler to stop; the first reason wins, but a cancel
        overrides a pause as the server's rules do."""
        with self._lock:
            if self._why is None or (why is JobCancelled and self._why is JobPaused):
                self._why = why
        self.interrupted.set()

    def check(self) -> None:
        """Raise the JobInterrupted the job received, if any."""
        why = self._why
        if why is not None:
            raise why(f"job {self.id}: {why.reason}")

    def sleep(self, secs: float) -> None:
        """Sleep, waking to raise at once if the job is interrupted."""
        self.interrupted.wait(secs)
        self.check()

    def progress(self, percent: int, message: Optional[str] = None) -> None:
        """Record progress (0-100) and a message for the next heartbeat; a checkpoint."""
        with self._lock:
            self._progress = max(0, min(100, int(percent)))
            if message is not None:
                self._message = message
        self.check()

    def save_checkpoint(self, value: Any) -> None:
        """Record what the next attempt needs to resume, sent with the next
        heartbeat (and handed back to the next attempt as ``checkpoint``)."""
        with self._lock:
            self._checkpoint = value
            self._checkpoint_dirty = True
            self._saved = True
        self.check()

    def heartbeat(self) -> None:
        """Send a heartbeat now, with the recorded progress and checkpoint."""
        self._worker._beat(self)
        self.check()

    def beat_fields(self) -> Tuple[Optional[int], Optional[str], Any, bool]:
        """The progress, message and checkpoint a heartbeat sends; the
        checkpoint only while a heartbeat has not carried it yet."""
        with self._lock:
            return self._progress, self._message, self._checkpoint, self._checkpoint_dirty

    def beat_sent(self, checkpoint: Any) -> None:
        with self._lock:
            if self._checkpoint is checkpoint:
                self._checkpoint_dirty = False
