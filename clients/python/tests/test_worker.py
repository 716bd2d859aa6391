"""Worker in this process against a real server: results, retries with
backoff, permanent errors, snooze, and cancel and pause reaching the
running handler."""
import datetime as dt
import threading
import unittest
from typing import Any, Dict, List

from tests.harness import SERVER, TOKEN, WORKER_TOKEN, FaultProxy, client, fresh, needs_server, skiplock, wait_for


def state_in(c: skiplock.Client, jid: int, *states: str) -> Any:
    j = c.get(jid)
    return j if j.state in states else None


@needs_server
class WorkerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)
        self.queue = fresh("w")

    def worker(self, **kw: Any) -> skiplock.Worker:
        wc = client(token=WORKER_TOKEN) if WORKER_TOKEN else self.c
        self.addCleanup(wc.close)
        kw.setdefault("wait_seconds", 1)
        w = skiplock.Worker(wc, self.queue, **kw)

        def stop() -> None:
            w.stop()
            self.assertTrue(w.join(30), "the worker did not stop")
        self.addCleanup(stop)
        return w

    def test_enqueue_work_complete(self) -> None:
        w = self.worker(concurrency=4)
        w.handle("add", lambda job: {"sum": sum(job.payload["numbers"]), "attempt": job.attempt})
        ids = [self.c.enqueue("add", {"numbers": [i, 1]}, queue=self.queue).id for i in range(10)]
        w.start()
        for i, jid in enumerate(ids):
            j = wait_for(lambda: (lambda j: j if j.state == "completed" else None)(self.c.get(jid)), 30, f"job {jid}")
            self.assertEqual(j.result, {"sum": i + 1, "attempt": 1})
            self.assertEqual(j.worker_id, w.worker_id)

    def test_raise_retries_with_backoff_then_fails(self) -> None:
        w = self.worker(backoff=lambda attempt: 0.5 * attempt)

        @w.handle("boom")
        def boom(job: skiplock.JobContext) -> None:
            raise ValueError(f"boom {job.attempt}")
        jid = self.c.enqueue("boom", queue=self.queue, max_retries=2).id
        w.start()
        j = wait_for(lambda: (lambda j: j if j.state == "failed" else None)(self.c.get(jid)), 30, "failed")
        self.assertEqual([(e["attempt"], e["type"], e["message"], e["retryable"]) for e in j.errors],
                         [(1, "ValueError", "boom 1", True), (2, "ValueError", "boom 2", True),
                          (3, "ValueError", "boom 3", False)])  # the last: no retry left
        at = [skiplock.jobs.parse_time(e["at"]) for e in j.errors]
        self.assertGreaterEqual((at[1] - at[0]).total_seconds(), 0.5)
        self.assertGreaterEqual((at[2] - at[1]).total_seconds(), 1.0)

    def test_server_backoff_by_default(self) -> None:
        w = self.worker()

        @w.handle("once")
        def once(job: skiplock.JobContext) -> None:
            raise RuntimeError("transient")
        jid = self.c.enqueue("once", queue=self.queue).id
        w.start()
        j = wait_for(lambda: (lambda j: j if j.state == "scheduled" else None)(self.c.get(jid)), 30, "scheduled")
        self.assertGreater((j.run_at - dt.datetime.now(dt.timezone.utc)).total_seconds(), 20)

    def test_permanent_and_snooze(self) -> None:
        w = self.worker()

        @w.handle("bad")
        def bad(job: skiplock.JobContext) -> None:
            raise skiplock.Permanent(KeyError("payload.x"))

        @w.handle("later")
        def later(job: skiplock.JobContext) -> Any:
            if job.attempt == 1:
                raise skiplock.Snooze(0.3)
            return "done"
        bad_id = self.c.enqueue("bad", queue=self.queue, max_retries=5).id
        later_id = self.c.enqueue("later", queue=self.queue).id
        w.start()
        j = wait_for(lambda: (lambda j: j if j.state == "failed" else None)(self.c.get(bad_id)), 30, "failed")
        self.assertEqual([(e["type"], e["retryable"]) for e in j.errors], [("KeyError", False)])
        j = wait_for(lambda: (lambda j: j if j.state == "completed" else None)(self.c.get(later_id)), 30, "completed")
        self.assertEqual((j.result, j.errors[0]["type"]), ("done", "snooze"))

    def _long_job(self, seen: List[str], checkpoint: bool = False) -> skiplock.Worker:
        w = self.worker(lease_seconds=3)  # a heartbeat a second
        started = threading.Event()

        @w.handle("long")
        def long(job: skiplock.JobContext) -> Any:
            if job.checkpoint is not None:
                return {"resumed_from": job.checkpoint}
            started.set()
            try:
                for i in range(600):
                    job.progress(i % 100, f"step {i}")
                    if checkpoint:
                        job.save_checkpoint({"step": i})
                    job.sleep(0.05)
            except skiplock.JobInterrupted as e:
                seen.append(type(e).__name__)
                raise
            return "not interrupted"
        w.start()
        self.started = started
        return w

    def test_cancel_reaches_running_handler(self) -> None:
        seen: List[str] = []
        self._long_job(seen)
        jid = self.c.enqueue("long", queue=self.queue).id
        self.assertTrue(self.started.wait(30))
        wait_for(lambda: self.c.get(jid).progress_message.startswith("step"), 10, "a heartbeat's progress")  # type: ignore[union-attr]
        self.c.cancel(jid)
        j = wait_for(lambda: (lambda j: j if j.state == "cancelled" else None)(self.c.get(jid)), 15, "cancelled")
        self.assertEqual(seen, ["JobCancelled"])
        self.assertIsNotNone(j.finished_at)

    def test_pause_reaches_running_handler_and_resume_resumes(self) -> None:
        seen: List[str] = []
        self._long_job(seen, checkpoint=True)
        jid = self.c.enqueue("long", queue=self.queue).id
        self.assertTrue(self.started.wait(30))
        self.c.pause(jid)
        j = wait_for(lambda: (lambda j: j if j.state == "paused" else None)(self.c.get(jid)), 15, "paused")
        self.assertEqual(seen, ["JobPaused"])
        self.assertIn("step", j.checkpoint)
        self.c.resume(jid)
        j = wait_for(lambda: (lambda j: j if j.state == "completed" else None)(self.c.get(jid)), 15, "completed")
        self.assertEqual(j.result["resumed_from"]["step"], j.checkpoint["step"] if j.checkpoint else j.result["resumed_from"]["step"])
        self.assertGreater(j.result["resumed_from"]["step"], 0)

    def test_refused_result_fails_its_job_only(self) -> None:
        w = self.worker(concurrency=4)
        w.handle("r", lambda job: "x" * (1 << 20) if job.payload["big"] else "small")
        jobs = self.c.enqueue_many([{"kind": "r", "queue": self.queue, "payload": {"big": i == 1}} for i in range(4)])
        w.start()
        done = [wait_for(lambda: state_in(self.c, j.id, "completed", "failed"), 30, f"job {j.id}") for j in jobs]
        self.assertEqual([j.state for j in done], ["completed", "failed", "completed", "completed"])
        self.assertEqual((done[1].errors[0]["type"], done[1].errors[0]["retryable"]), ("result_refused", False))
        self.assertEqual(done[0].result, "small")

    def test_503_loses_no_report(self) -> None:
        proxy = FaultProxy(SERVER)
        self.addCleanup(proxy.close)
        through = skiplock.Client(proxy.url, token=WORKER_TOKEN or TOKEN)
        self.addCleanup(through.close)
        w = skiplock.Worker(through, self.queue, concurrency=8, wait_seconds=1, report_interval=0.01)
        self.addCleanup(lambda: (w.stop(), w.join(30)))

        @w.handle("n")
        def n(job: skiplock.JobContext) -> Any:
            job.sleep(0.02)
            return job.payload["i"]
        jobs = self.c.enqueue_many([{"kind": "n", "queue": self.queue, "payload": {"i": i}} for i in range(200)])
        w.start()
        wait_for(lambda: w.started_jobs >= 40, 30, "40 jobs started")
        proxy.down = True  # claims and reports answer 503 for a while, jobs finishing meanwhile
        wait_for(lambda: proxy.refused >= 8, 30, "refused calls")
        proxy.down = False
        wait_for(lambda: w.completed == 200, 60, "every completion reported")
        got = {j.id: (j.state, j.attempt, j.result, len(j.errors)) for j in self.c.iter_jobs(queue=self.queue, limit=1000)}
        self.assertEqual(got, {j.id: ("completed", 1, i, 0) for i, j in enumerate(jobs)})

    def test_complete_with_next_stage(self) -> None:
        w = self.worker()
        wf = fresh("wf")

        @w.handle("fetch")
        def fetch(job: skiplock.JobContext) -> Any:
            return skiplock.Complete({"pages": 2}, next=[
                skiplock.JobSpec("parse", {"page": p}, queue=self.queue, stage="parse") for p in range(2)])
        w.handle("parse", lambda job: job.payload["page"])
        self.c.enqueue("fetch", queue=self.queue, workflow_id=wf, stage="fetch")
        w.start()
        flow = wait_for(lambda: (lambda f: f if f.state == "completed" and len(f.jobs) == 3 else None)(
            self.c.workflow(wf)), 30, "the workflow completed")
        self.assertEqual([(j.stage, j.result) for j in flow.jobs], [("fetch", {"pages": 2}), ("parse", 0), ("parse", 1)])

    def test_configuration_errors(self) -> None:
        with self.assertRaises(ValueError):
            skiplock.Worker(self.c, concurrency=0)
        with self.assertRaises(ValueError):
            skiplock.Worker(self.c, wait_seconds=61)
        with self.assertRaises(ValueError):
            skiplock.Worker(self.c).start()  # no handlers
        wrong = client(token="skl_wrong")
        self.addCleanup(wrong.close)
        w = skiplock.Worker(wrong, self.queue, wait_seconds=1)
        w.handle("x", lambda job: None)
        with self.assertRaises(skiplock.Unauthenticated):
            w.run(handle_signals=False)

    def test_reports_batched_through_claims(self) -> None:
        w = self.worker(concurrency=50)
        w.handle("n", lambda job: job.payload["i"])
        jobs = self.c.enqueue_many([{"kind": "n", "queue": self.queue, "payload": {"i": i}} for i in range(500)])
        w.start()
        wait_for(lambda: w.completed == 500, 60, "500 completions")
        by: Dict[int, Any] = {j.id: j.result for j in self.c.iter_jobs(queue=self.queue, limit=1000)}
        self.assertEqual([by[j.id] for j in jobs], list(range(500)))

    def test_reports_name_the_queue(self) -> None:
        """Every report carries the job's queue (its shard on Citus): heartbeats,
        failures, completions with next jobs, and completions a claim or
        POST /v1/jobs/complete carries."""
        w = self.worker(concurrency=4, lease_seconds=3)
        sent: List[Any] = []
        request = w.client.transport.request

        def recording(method: str, path: str, body: Any = None, **kw: Any) -> Any:
            if path.endswith(("/heartbeat", "/complete", "/fail", "/claim")):
                sent.append((path, body))
            return request(method, path, body, **kw)
        w.client.transport.request = recording  # type: ignore[method-assign]

        @w.handle("slow")
        def slow(job: skiplock.JobContext) -> int:
            threading.Event().wait(1.5)  # over a third of the lease: one heartbeat
            return 1

        @w.handle("bad")
        def bad(job: skiplock.JobContext) -> None:
            raise skiplock.Permanent(ValueError("no"))

        @w.handle("parent")
        def parent(job: skiplock.JobContext) -> skiplock.Complete:
            return skiplock.Complete(None, next=[skiplock.JobSpec("slow", queue=self.queue)])
        ids = [self.c.enqueue(k, queue=self.queue).id for k in ("slow", "bad", "parent", "slow")]
        w.start()
        for jid in ids:
            wait_for(lambda: state_in(self.c, jid, "completed", "failed"), 30, f"job {jid} finished")
        w.stop()
        self.assertTrue(w.join(30))
        reports: Dict[str, int] = {}
        for path, body in sent:
            if path.endswith("/claim") or path == "/v1/jobs/complete":
                items, what = body.get("complete") or body.get("jobs") or [], "batch"
            else:
                items, what = [body], path.rsplit("/", 1)[-1]
            for it in items:
                self.assertEqual(it.get("queue"), self.queue, f"{path}: {it}")
                reports[what] = reports.get(what, 0) + 1
        for what in ("heartbeat", "fail", "complete", "batch"):
            self.assertIn(what, reports, f"no {what} report sent: {sent}")


if __name__ == "__main__":
    unittest.main()
