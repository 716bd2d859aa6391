"""A worker process for the tests: runs kind "work" jobs of a queue and
writes "<id> <attempt> <worker_id>" per job it starts to a runs file.

    worker_proc.py QUEUE RUNS_FILE MODE [--lease S] [--concurrency N] [--shutdown-timeout S] [--wait S]

MODE: "quick" returns at once; "hang" sleeps until killed; "slow" works
1.5 s, checking for interruptions; "stubborn" sleeps 30 s ignoring them.
The runs of "quick" are written when the worker stops (SIGTERM), the
others' at once. The file RUNS_FILE.ready appears once the worker's
SIGTERM handler is in place, so a test's SIGTERM cannot come first.
"""
import argparse
import logging
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import skiplock  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("queue")
    p.add_argument("runs")
    p.add_argument("mode", choices=["quick", "hang", "slow", "stubborn"])
    p.add_argument("--lease", type=float, default=None)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--shutdown-timeout", type=float, default=30.0)
    p.add_argument("--wait", type=float, default=2.0, help="the claims' wait_seconds")
    a = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s worker_proc %(levelname)s %(message)s")

    client = skiplock.Client(os.environ["SKIPLOCK_SERVER"], token=os.environ.get("SKIPLOCK_TOKEN") or None)
    worker = skiplock.Worker(client, a.queue, concurrency=a.concurrency, lease_seconds=a.lease,
                             wait_seconds=a.wait, shutdown_timeout=a.shutdown_timeout)
    runs = []
    lock = threading.Lock()

    def note(job: skiplock.JobContext) -> None:
        line = f"{job.id} {job.attempt} {worker.worker_id}\n"
        if a.mode == "quick":
            runs.append(line)
            return
        with lock, open(a.runs, "a") as f:
            f.write(line)

    @worker.handle("work")
    def work(job: skiplock.JobContext) -> object:
        note(job)
        if a.mode == "hang":
            time.sleep(3600)
        elif a.mode == "slow":
            for i in range(15):
                job.progress(i * 6, "working")
                job.sleep(0.1)
        elif a.mode == "stubborn":
            time.sleep(30)
        return {"attempt": job.attempt, "worker": worker.worker_id}

    def announce_ready() -> None:
        while signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            time.sleep(0.01)
        with open(a.runs + ".ready", "w"):
            pass
    threading.Thread(target=announce_ready, daemon=True).start()
    worker.run()
    if a.mode == "quick":
        with open(a.runs, "w") as f:
            f.writelines(runs)


if __name__ == "__main__":
    main()
