#!/usr/bin/env python3
"""A Skiplock HTTP worker in Python, standard library only.

It claims jobs of a queue with long polling, reports progress with a
heartbeat, and completes each job with a result (or fails it). Every report
carries the claimed job's attempt, so a report on an attempt the worker lost
(its lease ran out) is refused with 409.

    SKIPLOCK_SERVER=http://127.0.0.1:8080 SKIPLOCK_QUEUE=default python3 worker.py

Environment: SKIPLOCK_SERVER, SKIPLOCK_TOKEN (a worker token, when the server
has tokens), SKIPLOCK_QUEUE, SKIPLOCK_MAX_JOBS (stop after that many jobs;
0 = run forever).
"""
import json
import os
import socket
import urllib.error
import urllib.request

SERVER = os.environ.get("SKIPLOCK_SERVER", "http://127.0.0.1:8080").rstrip("/")
TOKEN = os.environ.get("SKIPLOCK_TOKEN", "")
QUEUE = os.environ.get("SKIPLOCK_QUEUE", "default")
MAX_JOBS = int(os.environ.get("SKIPLOCK_MAX_JOBS", "0"))
WORKER_ID = f"{socket.gethostname()}-{os.getpid()}-py"


def call(path, body):
    req = urllib.request.Request(SERVER + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    if TOKEN:
        req.add_header("Authorization", "Bearer " + TOKEN)
    with urllib.request.urlopen(req, timeout=90) as res:
        return json.load(res)


def child_traceparent(job):
    """A span of this worker in the trace the job was enqueued in (W3C Trace
    Context): same trace id, a new span id. With OpenTelemetry, pass the
    job's traceparent to its propagator instead and start a span there."""
    tp = job.get("traceparent")
    if not tp:
        return None
    version, trace_id, _parent, flags = tp.split("-")
    return f"{version}-{trace_id}-{os.urandom(8).hex()}-{flags}"


def work(job):
    """The job's work: here, add the numbers of the payload."""
    numbers = job["payload"].get("numbers")
    if not isinstance(numbers, list):
        raise ValueError("payload.numbers must be a list")
    call(f"/v1/jobs/{job['id']}/heartbeat",
         {"worker_id": WORKER_ID, "attempt": job["attempt"], "progress": 50, "progress_message": "adding"})
    return {"sum": sum(numbers), "worker": "python", "traceparent": child_traceparent(job)}


def main():
    done = 0
    while MAX_JOBS == 0 or done < MAX_JOBS:
        jobs = call(f"/v1/queues/{QUEUE}/claim", {"worker_id": WORKER_ID, "max": 1, "wait_seconds": 30})["jobs"]
        for job in jobs:
            try:
                result = work(job)
            except Exception as e:  # report the failure; the server retries per the job's policy
                call(f"/v1/jobs/{job['id']}/fail", {"worker_id": WORKER_ID, "attempt": job["attempt"],
                     "error": {"type": type(e).__name__, "message": str(e)}, "retryable": False})
            else:
                call(f"/v1/jobs/{job['id']}/complete",
                     {"worker_id": WORKER_ID, "attempt": job["attempt"], "result": result})
            done += 1


if __name__ == "__main__":
    try:
        main()
    except urllib.error.HTTPError as e:
        raise SystemExit(f"skiplock: HTTP {e.code}: {e.read().decode()}")
