"""Worker processes and server processes: kill -9 of a worker mid-job,
graceful shutdown on SIGTERM, 20,000 jobs through 4 processes, and a
server restart in the middle of a run."""
import collections
import os
import signal
import socket
import subprocess
import time
import unittest
from typing import Any, Dict, List, Optional

from tests.harness import (BINARY, RESTART_DATABASE_URL, TMP, client, fresh, lines_with, needs_server, read_runs,
                           skiplock, wait_for, worker_process)


def state_is(c: skiplock.Client, jid: int, *states: str) -> Any:
    j = c.get(jid)
    return j if j.state in states else None


@needs_server
class WorkerProcessTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)
        self.queue = fresh("p")
        self.runs = os.path.join(TMP, self.queue + ".runs")

    def spawn(self, *args: str, **kw: Any) -> "subprocess.Popen[bytes]":
        p = worker_process(*args, **kw)

        def end() -> None:
            if p.poll() is None:
                p.kill()
            p.wait()
            if p.stderr:
                p.stderr.close()
        self.addCleanup(end)
        return p

    def test_kill_9_mid_job_runs_again_and_late_report_refused(self) -> None:
        jid = self.c.enqueue("work", queue=self.queue, max_retries=3).id
        p = self.spawn(self.queue, self.runs, "hang", "--lease", "2")
        ((rid, attempt, dead),) = wait_for(lines_with(self.runs, 1), 30, "the job to start")
        self.assertEqual((int(rid), attempt), (jid, "1"))
        p.send_signal(signal.SIGKILL)
        p.wait()
        # Another worker gets it once its lease has run out.
        w = skiplock.Worker(self.c, self.queue, lease_seconds=2, wait_seconds=1)
        w.handle("work", lambda job: {"attempt": job.attempt})
        w.start()
        self.addCleanup(lambda: (w.stop(), w.join(30)))
        j = wait_for(lambda: state_is(self.c, jid, "completed"), 30, "the job to run again")
        self.assertEqual((j.attempt, j.result), (2, {"attempt": 2}))
        self.assertEqual([(e["attempt"], e["type"]) for e in j.errors], [(1, "lease_expired")])
        self.assertGreaterEqual(j.started_at, skiplock.jobs.parse_time(j.errors[0]["at"]))  # after the lease ran out
        # The dead worker's late reports of attempt 1 are refused.
        with self.assertRaises(skiplock.Conflict):
            self.c.complete(jid, dead, 1, {"late": True})
        with self.assertRaises(skiplock.Conflict):
            self.c.fail(jid, dead, 1, "late", "too late")
        (r,) = self.c.complete_many(dead, [{"id": jid, "attempt": 1}])
        self.assertEqual((r.ok, r.code), (False, "conflict"))
        self.assertEqual(self.c.get(jid).result, {"attempt": 2})

    def test_sigterm_drains_running_job_and_gives_back_the_claim(self) -> None:
        p = self.spawn(self.queue, self.runs, "slow", "--concurrency", "2")
        jid = self.c.enqueue("work", queue=self.queue).id
        wait_for(lines_with(self.runs, 1), 30, "the job to start")
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(30), 0)
        self.assertEqual(self.c.get(jid).state, "completed")  # drained and reported before exit
        # A worker waiting in a 30 s long poll abandons it (closing its
        # connection) rather than waiting it out; its claim gets nothing.
        os.remove(self.runs + ".ready")  # the first worker's
        p = self.spawn(self.queue, self.runs, "quick", "--wait", "30")
        wait_for(lambda: os.path.exists(self.runs + ".ready"), 30, "the worker's SIGTERM handler")
        time.sleep(1.0)  # into its long poll
        began = time.monotonic()
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(60), 0)
        self.assertLess(time.monotonic() - began, 25, "the worker waited its long poll out")
        later = self.c.enqueue("work", queue=self.queue)
        time.sleep(0.5)
        self.assertEqual((self.c.get(later.id).state, self.c.get(later.id).attempt), ("pending", 0))

    def test_sigterm_hands_back_a_job_past_the_drain_deadline(self) -> None:
        p = self.spawn(self.queue, self.runs, "stubborn", "--shutdown-timeout", "0.5")
        jid = self.c.enqueue("work", queue=self.queue).id
        wait_for(lines_with(self.runs, 1), 30, "the job to start")
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(30), 0)
        j = self.c.get(jid)
        self.assertEqual((j.state, j.attempt), ("pending", 1))
        self.assertEqual([(e["type"], e["retryable"]) for e in j.errors], [("worker_shutdown", True)])

    def test_20000_jobs_through_4_processes(self) -> None:
        total = 20000
        for start in range(0, total, 10000):
            self.c.enqueue_many([{"kind": "work", "queue": self.queue, "payload": {"i": i}}
                                 for i in range(start, start + 10000)])
        procs = [self.spawn(self.queue, f"{self.runs}.{n}", "quick", "--concurrency", "32", "--lease", "60")
                 for n in range(4)]

        def done() -> bool:  # no live job left: the queue is gone from the list, or all its counts are 0
            live = [sum(q["counts"].values()) for q in self.c.queues() if q["name"] == self.queue]
            return sum(live) == 0
        wait_for(done, 240, f"{total} jobs to finish", every=0.5)
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            self.assertEqual(p.wait(30), 0)
        runs: Dict[int, int] = collections.Counter()
        by_proc = []
        for n in range(4):
            lines = read_runs(f"{self.runs}.{n}")
            by_proc.append(len(lines))
            runs.update(int(line[0]) for line in lines)
        states = collections.Counter(j.state for j in self.c.iter_jobs(queue=self.queue, limit=1000))
        self.assertEqual(states, {"completed": total})
        self.assertEqual(len(runs), total, "jobs never run")
        twice = {jid for jid, n in runs.items() if n > 1}
        expired = {j.id for j in self.c.iter_jobs(queue=self.queue, error_type="lease_expired", limit=1000)}
        self.assertEqual(twice - expired, set(), "jobs run twice outside an expired lease")
        self.assertGreater(min(by_proc), 0, f"a process ran no job: {by_proc}")


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


@unittest.skipUnless(BINARY and RESTART_DATABASE_URL, "SKIPLOCK_TEST_BINARY and SKIPLOCK_TEST_RESTART_DATABASE_URL not set")
class ServerRestartTest(unittest.TestCase):
    def serve(self, port: int) -> "subprocess.Popen[bytes]":
        p = subprocess.Popen([BINARY, "serve", "--listen", f"127.0.0.1:{port}", "--database-url", RESTART_DATABASE_URL,
                              "--log-level", "warn"], cwd=TMP, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait()))
        return p

    def test_restart_mid_run_loses_nothing(self) -> None:
        port = free_port()
        server = self.serve(port)
        c = skiplock.Client(f"http://127.0.0.1:{port}", timeout=5)
        self.addCleanup(c.close)

        def up() -> bool:
            try:
                return c.health()["status"] == "ok"
            except skiplock.SkiplockError:
                return False
        wait_for(up, 60, "the server")
        total = 3000
        ids = [j.id for j in c.enqueue_many([{"kind": "work", "payload": {"i": i}, "max_retries": 100}
                                             for i in range(total)])]
        runs: Dict[int, int] = collections.Counter()
        # A short lease: the jobs of a claim whose answer the kill lost come back when it runs out.
        w = skiplock.Worker(c, concurrency=16, lease_seconds=4, wait_seconds=1, report_interval=0.2)

        @w.handle("work")
        def work(job: skiplock.JobContext) -> Any:
            runs[job.id] += 1
            time.sleep(0.002)
            return job.payload["i"]
        w.start()
        self.addCleanup(lambda: (w.stop(), w.join(60)))
        wait_for(lambda: w.completed >= total // 4, 60, "a quarter of the jobs")
        server.send_signal(signal.SIGKILL)
        server.wait()
        time.sleep(1.0)
        self.serve(port)
        wait_for(up, 60, "the server back")

        def finished() -> Optional[List[skiplock.Job]]:
            jobs = list(c.iter_jobs(queue="default", limit=1000))
            return jobs if len(jobs) == total and all(j.state == "completed" for j in jobs) else None
        jobs = wait_for(finished, 180, "every job completed", every=0.5)
        self.assertEqual({j.id: j.result for j in jobs}, {jid: i for i, jid in enumerate(ids)})
        self.assertEqual(set(runs), set(ids))
        twice = {jid for jid, n in runs.items() if n > 1}
        expired = {j.id for j in jobs if any(e["type"] == "lease_expired" for e in j.errors)}
        self.assertEqual(twice - expired, set(), "jobs run twice outside an expired lease")
        w.stop()  # while the server runs: the cleanups stop the server first
        self.assertTrue(w.join(60))


if __name__ == "__main__":
    unittest.main()
