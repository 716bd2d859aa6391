#!/usr/bin/env python3
"""A Skiplock HTTP worker in Python that works jobs in batches, standard
library only.

Each round is one request: the claim of up to SKIPLOCK_BATCH jobs carries
the report of the jobs of the round before ("complete"), and its answer
says how each report went ("completed"). The server reports and claims in
one transaction. A job that fails is reported at once with its own call.
Every report carries the claimed job's attempt.

    SKIPLOCK_SERVER=http://127.0.0.1:8080 SKIPLOCK_QUEUE=default python3 batch_worker.py

Environment: SKIPLOCK_SERVER, SKIPLOCK_TOKEN (a worker token, when the server
has tokens), SKIPLOCK_QUEUE, SKIPLOCK_BATCH (jobs a claim, 1-1000; default
100), SKIPLOCK_MAX_JOBS (stop after that many jobs; 0 = run forever).
"""
import json
import os
import socket
import sys
import urllib.error
import urllib.request

SERVER = os.environ.get("SKIPLOCK_SERVER", "http://127.0.0.1:8080").rstrip("/")
TOKEN = os.environ.get("SKIPLOCK_TOKEN", "")
QUEUE = os.environ.get("SKIPLOCK_QUEUE", "default")
BATCH = int(os.environ.get("SKIPLOCK_BATCH", "100"))
MAX_JOBS = int(os.environ.get("SKIPLOCK_MAX_JOBS", "0"))
WORKER_ID = f"{socket.gethostname()}-{os.getpid()}-py-batch"


def call(path, body):
    req = urllib.request.Request(SERVER + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    if TOKEN:
        req.add_header("Authorization", "Bearer " + TOKEN)
    with urllib.request.urlopen(req, timeout=90) as res:
        return json.load(res)


def work(job):
    """The job's work: here, add the numbers of the payload."""
    numbers = job["payload"].get("numbers")
    if not isinstance(numbers, list):
        raise ValueError("payload.numbers must be a list")
    return {"sum": sum(numbers), "worker": "python-batch"}


def check(outcomes):
    """A report the server refused (409: the lease was lost and the job is
    someone else's now, or this report was sent before) is said and
    dropped: the job is not this worker's to finish."""
    for o in outcomes:
        if not o["ok"]:
            print(f"job {o['id']}: report refused: {o['error']['message']}", file=sys.stderr)


def main():
    done = 0
    finished = []  # reports of the jobs worked since the last claim
    while MAX_JOBS == 0 or done < MAX_JOBS:
        want = BATCH if MAX_JOBS == 0 else min(BATCH, MAX_JOBS - done)
        body = {"worker_id": WORKER_ID, "max": want, "wait_seconds": 30, "fields": ["kind", "payload"]}
        if finished:
            body["complete"] = finished
        answer = call(f"/v1/queues/{QUEUE}/claim", body)
        check(answer.get("completed", []))
        finished = []
        for job in answer["jobs"]:
            try:
                result = work(job)
            except Exception as e:  # report the failure; the server retries per the job's policy
                call(f"/v1/jobs/{job['id']}/fail", {"worker_id": WORKER_ID, "attempt": job["attempt"],
                     "error": {"type": type(e).__name__, "message": str(e)}, "retryable": False})
            else:
                finished.append({"id": job["id"], "attempt": job["attempt"], "result": result})
            done += 1
    if finished:  # the last round's jobs: no claim follows to carry them
        check(call("/v1/jobs/complete", {"worker_id": WORKER_ID, "jobs": finished})["results"])


if __name__ == "__main__":
    try:
        main()
    except urllib.error.HTTPError as e:
        raise SystemExit(f"skiplock: HTTP {e.code}: {e.read().decode()}")
