"""Heartbeats of a worker's running jobs, each at a third of its lease,
carrying progress, message and checkpoint, and bringing back cancel and
pause requests and lost leases."""
import threading
import time
from typing import TYPE_CHECKING

from .context import JobCancelled, JobContext, JobPaused, LeaseLost
from .errors import Conflict, NotFound, SkiplockError

if TYPE_CHECKING:
    from .worker import Worker


class Heartbeater:
    def __init__(self, worker: "Worker") -> None:
        self.worker = worker
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="skiplock-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            now = time.monotonic()
            for ctx in self.worker.running():
                if ctx.reported or ctx.reason == LeaseLost.reason:
                    continue
                if now - ctx.last_beat >= ctx.lease / 3:
                    self.beat(ctx)

    def beat(self, ctx: JobContext) -> None:
        """One heartbeat of ctx's job; a failure to reach the server is
        logged and the next tick tries again."""
        w = self.worker
        progress, message, checkpoint, send_checkpoint = ctx.beat_fields()
        try:
            hb = w.client.heartbeat(ctx.id, w.worker_id, ctx.attempt, lease_seconds=w.lease_seconds,
                                    progress=progress, progress_message=message,
                                    checkpoint=checkpoint if send_checkpoint else None, queue=ctx.job.queue)
        except (Conflict, NotFound) as e:
            w.log.warning("job %d: lease lost: %s", ctx.id, e.message,
                extra={"job_id": ctx.id, "attempt": ctx.attempt, "error": e.message})
            ctx.interrupt(LeaseLost)
            return
        except SkiplockError as e:
            w.log.warning("job %d: heartbeat failed: %s", ctx.id, e, extra={"job_id": ctx.id, "error": str(e)})
            ctx.last_beat = time.monotonic() - ctx.lease / 3 + 1.0  # try again in a second
            return
        ctx.last_beat = time.monotonic()
        if send_checkpoint:
            ctx.beat_sent(checkpoint)
        if hb.cancel_requested:
            ctx.interrupt(JobCancelled)
        elif hb.pause_requested:
            ctx.interrupt(JobPaused)
