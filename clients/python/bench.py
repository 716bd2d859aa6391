#!/usr/bin/env python3
"""No-op jobs a second through one Python worker process with batch claims.

A benchmark, not a test. Against a running server (its queue "bench" empty):

    python3 clients/python/bench.py --server http://127.0.0.1:8080 --jobs 20000

It enqueues --jobs no-op jobs in batches of 10,000, then times one Worker
(--concurrency threads, claims of up to that many jobs, completions carried
by the next claim) from its start until every job is completed. It also
says how much CPU the worker process used: on a machine shared with the
server, jobs per CPU second is what the client costs, whatever the load.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import skiplock  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", default=os.environ.get("SKIPLOCK_SERVER", "http://127.0.0.1:8080"))
    p.add_argument("--token", default=os.environ.get("SKIPLOCK_TOKEN"))
    p.add_argument("--queue", default="bench")
    p.add_argument("--jobs", type=int, default=20000)
    p.add_argument("--concurrency", type=int, default=100)
    a = p.parse_args()

    client = skiplock.Client(a.server, token=a.token)
    for start in range(0, a.jobs, 10000):
        n = min(10000, a.jobs - start)
        client.enqueue_many([{"kind": "noop", "queue": a.queue} for _ in range(n)])

    worker = skiplock.Worker(client, a.queue, concurrency=a.concurrency, wait_seconds=1)
    worker.handle("noop", lambda job: None)
    began, cpu = time.monotonic(), time.process_time()
    worker.start()
    while worker.completed < a.jobs:
        time.sleep(0.01)
    took, cpu = time.monotonic() - began, time.process_time() - cpu
    worker.stop()
    worker.join()
    print(f"{a.jobs} jobs in {took:.2f}s: {a.jobs / took:.0f} jobs/s "
          f"(1 process, concurrency {a.concurrency}, {a.server}); "
          f"the worker process used {cpu:.2f} s of CPU: {a.jobs / cpu:.0f} jobs per CPU second")


if __name__ == "__main__":
    main()
