#!/usr/bin/env python3
"""A Skiplock worker in Python, with the skiplock client library
(clients/python: `pip install ./clients/python`, standard library only).

It claims jobs of a queue with a long poll, reports progress with a
heartbeat, and completes each job with a result (or fails it). The library
sends every report with the claimed job's attempt, so a report on an attempt
the worker lost (its lease ran out) is refused with 409.

    SKIPLOCK_SERVER=http://127.0.0.1:8080 SKIPLOCK_QUEUE=default python3 worker.py

Environment: SKIPLOCK_SERVER, SKIPLOCK_TOKEN (a worker token, when the server
has tokens), SKIPLOCK_QUEUE, SKIPLOCK_MAX_JOBS (stop after that many jobs;
0 = run until SIGTERM or Ctrl-C).
"""
import os
import sys
import threading
from typing import Optional

try:
    import skiplock
except ImportError:  # run from a clone without installing the library
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
    import skiplock

SERVER = os.environ.get("SKIPLOCK_SERVER", "http://127.0.0.1:8080")
TOKEN = os.environ.get("SKIPLOCK_TOKEN") or None
QUEUE = os.environ.get("SKIPLOCK_QUEUE", "default")
MAX_JOBS = int(os.environ.get("SKIPLOCK_MAX_JOBS", "0"))

worker = skiplock.Worker(skiplock.Client(SERVER, token=TOKEN), QUEUE, concurrency=1)
done = 0
lock = threading.Lock()


def child_traceparent(job: skiplock.JobContext) -> Optional[str]:
    """A span of this worker in the trace the job was enqueued in (W3C Trace
    Context): same trace id, a new span id. With OpenTelemetry, pass the
    job's traceparent to its propagator instead and start a span there."""
    if not job.traceparent:
        return None
    version, trace_id, _parent, flags = job.traceparent.split("-")
    return f"{version}-{trace_id}-{os.urandom(8).hex()}-{flags}"


@worker.handle("add")
def add(job: skiplock.JobContext) -> dict:
    """The job's work: here, add the numbers of the payload."""
    try:
        numbers = job.payload.get("numbers")
        if not isinstance(numbers, list):  # bad input: retrying will not help
            raise skiplock.Permanent(ValueError("payload.numbers must be a list"))
        job.progress(50, "adding")
        job.heartbeat()  # send the progress now rather than at a third of the lease
        return {"sum": sum(numbers), "worker": "python", "traceparent": child_traceparent(job)}
    finally:
        count()


def count() -> None:
    global done
    with lock:
        done += 1
        if done == MAX_JOBS:
            worker.stop()  # drains: the job's report is sent before run() returns


if __name__ == "__main__":
    try:
        worker.run()
    except skiplock.APIError as e:
        raise SystemExit(f"skiplock: {e}")
