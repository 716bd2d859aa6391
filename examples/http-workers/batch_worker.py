#!/usr/bin/env python3
"""A Skiplock worker in Python for many short jobs, with the skiplock
client library (clients/python: `pip install ./clients/python`).

The Worker claims up to SKIPLOCK_BATCH jobs at a time (one thread each)
and reports the jobs it finished with its next claim ("complete"), so that
a round is one request and one transaction; what is left at the end goes
in one POST /v1/jobs/complete. Every report carries the claimed attempt.

    SKIPLOCK_SERVER=http://127.0.0.1:8080 SKIPLOCK_QUEUE=default python3 batch_worker.py

Environment: SKIPLOCK_SERVER, SKIPLOCK_TOKEN (a worker token, when the server
has tokens), SKIPLOCK_QUEUE, SKIPLOCK_BATCH (jobs a claim, 1-1000; default
100), SKIPLOCK_MAX_JOBS (stop after that many jobs; 0 = run until SIGTERM).
"""
import os
import sys
import threading

try:
    import skiplock
except ImportError:  # run from a clone without installing the library
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
    import skiplock

SERVER = os.environ.get("SKIPLOCK_SERVER", "http://127.0.0.1:8080")
TOKEN = os.environ.get("SKIPLOCK_TOKEN") or None
QUEUE = os.environ.get("SKIPLOCK_QUEUE", "default")
BATCH = int(os.environ.get("SKIPLOCK_BATCH", "100"))
MAX_JOBS = int(os.environ.get("SKIPLOCK_MAX_JOBS", "0"))

worker = skiplock.Worker(skiplock.Client(SERVER, token=TOKEN), QUEUE, concurrency=BATCH, claim_max=BATCH)
done = 0
lock = threading.Lock()


@worker.handle("add")
def add(job: skiplock.JobContext) -> dict:
    """The job's work: here, add the numbers of the payload."""
    global done
    with lock:
        done += 1
        if done == MAX_JOBS:
            worker.stop()  # claim no more; this job's report is still sent
    numbers = job.payload.get("numbers")
    if not isinstance(numbers, list):
        raise skiplock.Permanent(ValueError("payload.numbers must be a list"))
    return {"sum": sum(numbers), "worker": "python-batch"}


if __name__ == "__main__":
    try:
        worker.run()
    except skiplock.APIError as e:
        raise SystemExit(f"skiplock: {e}")
