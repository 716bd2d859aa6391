"""The worker's reports: completions batched (carried by the next claim or
sent with POST /v1/jobs/complete), failures one by one; each sent again
on network errors and 503 until the server has it."""
import logging
import random
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Set

from .client import Client
from .errors import APIError, Conflict, SkiplockError, is_transient
from .jobs import Report


class Backoff:
    """Exponential waits with jitter between attempts of a call that keeps failing."""

    def __init__(self, first: float = 0.1, most: float = 5.0) -> None:
        self.first, self.most, self.n = first, most, 0

    def next(self) -> float:
        d: float = min(self.most, self.first * (2.0 ** self.n))
        self.n += 1
        return d * (0.5 + random.random() / 2)

    def reset(self) -> None:
        self.n = 0


class Reporter:
    def __init__(self, client: Client, worker_id: str, log: logging.Logger, interval: float, batch: int) -> None:
        self.client = client
        self.worker_id = worker_id
        self.log = log
        self.interval = interval
        self.batch = batch
        self._cond = threading.Condition()
        self._done: List[Dict[str, Any]] = []  # completions not yet sent
        self._resent: Set[int] = set()  # ids whose completion was sent once and may have landed
        self._since = 0.0
        self._solo: List[Dict[str, Any]] = []  # completions a claim refused: sent on their own
        self._fails: List[Dict[str, Any]] = []  # reports of one call each: failures, completions with next jobs
        self._busy = 0  # reports taken and not yet settled
        self._closing = False
        self._give_up_at: Optional[float] = None
        self.completed = 0
        self.failed = 0
        self.refused = 0
        self._thread = threading.Thread(target=self._loop, name="skiplock-reporter", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def complete(self, job_id: int, attempt: int, result: Any, queue: Optional[str] = None) -> None:
        r: Dict[str, Any] = {"id": job_id, "attempt": attempt}
        if queue:
            r["queue"] = queue  # the job's shard on Citus
        if result is not None:
            r["result"] = result
        with self._cond:
            if not self._done:
                self._since = time.monotonic()
            self._done.append(r)
            if len(self._done) >= self.batch:
                self._cond.notify_all()

    def fail(self, job_id: int, attempt: int, error_type: str, message: str, retryable: bool,
             retry_in: Optional[float], queue: Optional[str] = None) -> None:
        with self._cond:
            self._fails.append({"id": job_id, "attempt": attempt, "type": error_type, "message": message,
                                "retryable": retryable, "retry_in": retry_in, "queue": queue})
            self._cond.notify_all()

    def complete_next(self, job_id: int, attempt: int, result: Any, next: List[Dict[str, Any]],
                      queue: Optional[str] = None) -> None:
        """A completion that inserts next jobs: the single-job call, on its own."""
        with self._cond:
            self._fails.append({"id": job_id, "attempt": attempt, "result": result, "next": next, "queue": queue})
            self._cond.notify_all()

    def take(self, most: int) -> List[Dict[str, Any]]:
        """Completions for a claim to carry; give them back with settle()."""
        with self._cond:
            out, self._done = self._done[:most], self._done[most:]
            self._since = time.monotonic()
            self._busy += len(out)
            return out

    def settle(self, sent: List[Dict[str, Any]], outcomes: Optional[Sequence[Report]], solo: bool = False) -> None:
        """Record how the completions sent went; with outcomes None they were
        not (or may not have been) stored and go back to be sent again: by
        the reporter itself when solo (a claim refused them), so that a bad
        result does not hold back the claims."""
        with self._cond:
            self._busy -= len(sent)
            if outcomes is None:
                self._resent.update(r["id"] for r in sent)
                if solo:
                    self._solo.extend(sent)
                else:
                    self._done[:0] = sent
            self._cond.notify_all()
        if outcomes is not None:
            self._outcomes(outcomes)

    def _outcomes(self, outcomes: Sequence[Report]) -> None:
        refused = []
        with self._cond:  # claim loops and the reporter's thread count here at once
            for o in outcomes:
                again = o.id in self._resent
                self._resent.discard(o.id)
                if o.ok or (again and o.code == "conflict" and "completed" in (o.message or "")):
                    self.completed += 1  # (a send again finds its first send landed)
                else:
                    self.refused += 1
                    refused.append(o)
        for o in refused:
            self.log.warning("job %d: completion refused: %s", o.id, o.message,
                extra={"job_id": o.id, "code": o.code, "error": o.message})

    def pending(self) -> int:
        with self._cond:
            return len(self._done) + len(self._solo) + len(self._fails) + self._busy

    def close(self, deadline: float) -> None:
        """Send what is left, trying until deadline (monotonic), then end."""
        with self._cond:
            self._closing = True
            self._give_up_at = deadline
            self._cond.notify_all()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._ready():
                    if self._closing and not self._done and not self._solo and not self._fails and not self._busy:
                        return
                    wait = None
                    if self._done:
                        wait = max(0.0, self._since + self.interval - time.monotonic())
                    self._cond.wait(wait if wait is not None else 0.5)
                fails, self._fails = self._fails, []
                if self._solo:
                    done, self._solo = self._solo[: self.batch], self._solo[self.batch:]
                else:
                    done, self._done = self._done[: self.batch], self._done[self.batch:]
                self._busy += len(done) + len(fails)
            for f in fails:
                self._send_fail(f)
            if done:
                self._send_done(done)

    def _ready(self) -> bool:
        if self._fails or self._solo:
            return True
        if not self._done:
            return False
        return self._closing or len(self._done) >= self.batch or time.monotonic() - self._since >= self.interval

    def _gave_up(self) -> bool:
        return self._give_up_at is not None and time.monotonic() > self._give_up_at

    def _send_done(self, done: List[Dict[str, Any]]) -> None:
        backoff = Backoff()
        while True:
            try:
                outcomes = self.client.complete_many(self.worker_id, done)
            except APIError as e:
                if not is_transient(e):
                    with self._cond:
                        self._busy -= len(done)
                    self._split(done, e)
                    return
                err: SkiplockError = e
            except SkiplockError as e:
                err = e
            else:
                self.settle(done, outcomes)
                return
            if self._gave_up():
                with self._cond:
                    self._busy -= len(done)
                self.log.error("%d completions not reported, giving up: %s", len(done), err,
                    extra={"job_ids": [r["id"] for r in done], "error": str(err)})
                return
            self.log.warning("%d completions not reported yet, retrying: %s", len(done), err,
                extra={"jobs": len(done), "error": str(err)})
            time.sleep(backoff.next())

    def _split(self, done: List[Dict[str, Any]], err: APIError) -> None:
        """A batch the server refused as a whole (one bad result): each job
        alone, and a job whose result the server refuses fails instead."""
        if len(done) > 1:
            for r in done:
                with self._cond:
                    self._busy += 1
                self._send_done([r])
            return
        r = done[0]
        self.log.error("job %d: completion refused, failing the job: %s", r["id"], err,
            extra={"job_id": r["id"], "error": str(err)})
        with self._cond:
            self._busy += 1
        self._send_fail({"id": r["id"], "attempt": r["attempt"], "type": "result_refused",
                         "message": str(err), "retryable": False, "retry_in": None, "queue": r.get("queue")})

    def _send_fail(self, f: Dict[str, Any]) -> None:
        """Send a report of its own (a failure, or a completion with next
        jobs), again and again through network errors and 503s."""
        what = "completion" if "next" in f else "failure"
        backoff = Backoff()
        try:
            while True:
                try:
                    if "next" in f:
                        self.client.complete(f["id"], self.worker_id, f["attempt"], f["result"], next=f["next"],
                                             queue=f["queue"])
                    else:
                        self.client.fail(f["id"], self.worker_id, f["attempt"], f["type"], f["message"],
                                         retryable=f["retryable"], retry_in=f["retry_in"], queue=f["queue"])
                    with self._cond:
                        if "next" in f:
                            self.completed += 1
                        else:
                            self.failed += 1
                    return
                except Conflict as e:
                    with self._cond:
                        self.refused += 1
                    self.log.warning("job %d: %s refused: %s", f["id"], what, e.message,
                        extra={"job_id": f["id"], "error": e.message})
                    return
                except SkiplockError as e:
                    if not is_transient(e) or self._gave_up():
                        self.log.error("job %d: %s not reported: %s", f["id"], what, e,
                            extra={"job_id": f["id"], "error": str(e)})
                        return
                    self.log.warning("job %d: %s not reported yet, retrying: %s", f["id"], what, e,
                        extra={"job_id": f["id"], "error": str(e)})
                time.sleep(backoff.next())
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()
