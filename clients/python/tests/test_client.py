"""Client against a real server: producers' and admins' calls, and errors."""
import datetime as dt
import socket
import ssl
import time
import unittest

from tests.harness import (TENANT_TOKEN, TLS_CA, TLS_SERVER, TOKEN, WORKER_TOKEN, client, fresh, needs_server,
                           skiplock)


@needs_server
class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)

    def test_enqueue_options_round_trip(self) -> None:
        q = fresh("opts")
        j = self.c.enqueue("email", {"to": "a@b"}, queue=q, priority=9, max_retries=7, tags=["x", "y"],
                           metadata={"customer": "acme"}, idempotency_key=fresh("key"))
        self.assertEqual((j.kind, j.queue, j.priority, j.max_retries, j.tags, j.state),
                         ("email", q, 9, 7, ["x", "y"], "pending"))
        self.assertEqual(j.payload, {"to": "a@b"})
        self.assertEqual(j.metadata, {"customer": "acme"})
        self.assertIsInstance(j.created_at, dt.datetime)
        again = self.c.enqueue("email", {"to": "other"}, queue=q, idempotency_key=j.idempotency_key)
        self.assertTrue(again.duplicate)
        self.assertEqual(again.id, j.id)
        later = self.c.enqueue("email", queue=q, delay=dt.timedelta(hours=1))
        self.assertEqual(later.state, "scheduled")
        at = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=2)
        self.assertEqual(self.c.enqueue("email", queue=q, run_at=at).run_at.date(), at.date())  # type: ignore[union-attr]
        self.assertEqual(self.c.get(j.id).id, j.id)

    def test_enqueue_many_in_order_all_or_nothing(self) -> None:
        q = fresh("batch")
        jobs = self.c.enqueue_many([skiplock.JobSpec("a", {"n": i}, queue=q) for i in range(5)])
        self.assertEqual([j.payload["n"] for j in jobs], list(range(5)))
        self.assertEqual(sorted(j.id for j in jobs), [j.id for j in jobs])
        with self.assertRaises(skiplock.InvalidArgument) as e:
            self.c.enqueue_many([{"kind": "a", "queue": q}, {"kind": "a", "queue": q, "priority": 11}])
        self.assertEqual((e.exception.status, e.exception.code, e.exception.field), (400, "invalid_argument", "jobs[1].priority"))
        self.assertEqual(len(list(self.c.iter_jobs(queue=q))), 5)

    def test_errors_are_typed(self) -> None:
        with self.assertRaises(skiplock.NotFound) as nf:
            self.c.get(2**62)
        self.assertEqual(nf.exception.code, "not_found")
        with self.assertRaises(skiplock.InvalidArgument) as bad:
            self.c.enqueue("x", {}, run_at="tomorrow")
        self.assertEqual(bad.exception.field, "run_at")
        with self.assertRaises(skiplock.PayloadTooLarge):
            self.c.enqueue("x", {"blob": "x" * (1 << 20)})
        j = self.c.enqueue("x", queue=fresh("conflict"))
        with self.assertRaises(skiplock.Conflict):
            self.c.retry(j.id)
        self.assertTrue(issubclass(skiplock.Conflict, skiplock.APIError))

    def test_network_error(self) -> None:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with self.assertRaises(skiplock.NetworkError):
            skiplock.Client(f"http://127.0.0.1:{port}", timeout=2).get(1)
        with self.assertRaises(ValueError):
            skiplock.Client("ftp://example")

    @unittest.skipUnless(TLS_SERVER and TLS_CA, "SKIPLOCK_TEST_TLS_SERVER and SKIPLOCK_TEST_TLS_CA not set")
    def test_tls(self) -> None:
        ctx = ssl.create_default_context(cafile=TLS_CA)
        with skiplock.Client(TLS_SERVER, token=TOKEN, ssl_context=ctx) as tls:
            self.assertEqual(tls.get(self.c.enqueue("x", queue=fresh("tls")).id).kind, "x")
        with skiplock.Client(TLS_SERVER, token=TOKEN) as untrusted:  # the system's trust store
            with self.assertRaises(skiplock.NetworkError):
                untrusted.get(1)

    def test_timeout(self) -> None:
        with socket.socket() as s:  # accepts connections, never answers
            s.bind(("127.0.0.1", 0))
            s.listen(8)
            began = time.monotonic()
            with self.assertRaises(skiplock.NetworkError):
                skiplock.Client(f"http://127.0.0.1:{s.getsockname()[1]}", timeout=0.5).get(1)
            self.assertLess(time.monotonic() - began, 5)

    def test_tokens_and_tenants(self) -> None:
        with self.assertRaises(skiplock.Unauthenticated):
            with client(token=None) as c:
                c.get(1)
        with self.assertRaises(skiplock.Unauthenticated):
            with client(token="skl_wrong") as c:
                c.get(1)
        if WORKER_TOKEN:
            with self.assertRaises(skiplock.PermissionDenied):
                with client(token=WORKER_TOKEN) as c:
                    c.enqueue("x")
        if TENANT_TOKEN:
            scoped = client(token=TENANT_TOKEN)
            self.addCleanup(scoped.close)
            mine = scoped.enqueue("x", queue=fresh("tenant"))
            self.assertEqual(mine.tenant, "acme")
            other = self.c.enqueue("x", tenant="globex")
            with self.assertRaises(skiplock.NotFound):
                scoped.get(other.id)
            with client(tenant="globex") as globex:
                self.assertEqual(globex.list_jobs(kind="x", limit=1000).jobs[0].tenant, "globex")

    def test_list_with_cursor(self) -> None:
        q = fresh("list")
        ids = [j.id for j in self.c.enqueue_many([{"kind": "k", "queue": q, "tags": ["t"]} for _ in range(7)])]
        page = self.c.list_jobs(queue=q, limit=3)
        self.assertEqual([j.id for j in page.jobs], ids[::-1][:3])
        self.assertEqual(page.next_cursor, str(ids[4]))
        self.assertEqual([j.id for j in self.c.iter_jobs(queue=q, limit=3)], ids[::-1])
        self.assertEqual(len(self.c.list_jobs(queue=q, state=["pending", "running"], tag="t").jobs), 7)
        self.assertEqual(self.c.list_jobs(queue=q, state="completed").jobs, [])

    def test_job_actions_and_bulk(self) -> None:
        q = fresh("actions")
        a, b, c = self.c.enqueue_many([{"kind": "k", "queue": q} for _ in range(3)])
        self.assertEqual(self.c.pause(a.id).state, "paused")
        self.assertEqual(self.c.resume(a.id).state, "pending")
        self.assertEqual(self.c.cancel(b.id).state, "cancelled")
        self.assertEqual(self.c.retry(b.id).state, "pending")
        dry = self.c.bulk("cancel", queue=q, dry_run=True)
        self.assertEqual((dry["matched"], dry["done"]), (3, 0))
        self.assertEqual(self.c.bulk("cancel", ids=[a.id, c.id], dry_run=True)["matched"], 2)
        self.assertEqual(self.c.bulk("cancel", ids=[a.id], payload={"n": 1}, dry_run=True)["matched"], 0)
        self.assertEqual(self.c.list_jobs(queue=q, payload={"n": 1}, error_message="x").jobs, [])
        self.assertEqual(self.c.bulk("cancel", queue=q, state="pending")["done"], 3)
        self.assertEqual(self.c.get(c.id).state, "cancelled")
        with self.assertRaises(skiplock.InvalidArgument) as e:
            self.c.bulk("cancel")
        self.assertEqual(e.exception.field, "filter")

    def test_workflow(self) -> None:
        wf = fresh("wf")
        first = self.c.enqueue("fetch", queue=wf, workflow_id=wf, stage="fetch")
        self.c.enqueue("parse", queue=wf, workflow_id=wf, stage="parse", depends_on=[first.id])
        w = self.c.workflow(wf)
        self.assertEqual((w.workflow_id, w.state), (wf, "running"))
        self.assertEqual([j.state for j in w.jobs], ["pending", "waiting"])
        with self.assertRaises(skiplock.NotFound):
            self.c.workflow(fresh("none"))

    def test_schedules(self) -> None:
        key = fresh("nightly")
        s = self.c.put_schedule(key, "report", dt.timedelta(hours=24), payload={"a": 1}, queue="reports",
                                next_run_at=dt.datetime(2999, 1, 1, tzinfo=dt.timezone.utc))
        self.assertEqual((s["key"], s["kind"], s["every_seconds"]), (key, "report", 86400))
        self.assertIn(key, [x["key"] for x in self.c.schedules()])
        self.c.delete_schedule(key)
        with self.assertRaises(skiplock.NotFound):
            self.c.delete_schedule(key)

    def test_queues_stats_health(self) -> None:
        q = fresh("q")
        self.c.enqueue("k", queue=q)
        self.assertIn(q, [x["name"] for x in self.c.queues()])
        self.assertTrue(self.c.pause_queue(q)["paused"])
        self.assertFalse(self.c.resume_queue(q)["paused"])
        self.assertIn("totals", self.c.stats())
        self.assertEqual(self.c.health()["status"], "ok")
        self.assertIn("kinds", self.c.kinds())


if __name__ == "__main__":
    unittest.main()
