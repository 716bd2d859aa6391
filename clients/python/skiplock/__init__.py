"""Skiplock client: enqueue and manage jobs, and run workers, over
Skiplock's HTTP API. Standard library only."""

__version__ = "0.1.0"

from .client import Client  # noqa: E402
from .context import (Complete, JobCancelled, JobContext, JobInterrupted, JobPaused, LeaseLost, Permanent,  # noqa: E402
                      RetryIn, Snooze, WorkerShutdown)
from .errors import (APIError, Conflict, InvalidArgument, MethodNotAllowed, NetworkError, NotFound,  # noqa: E402
                     PayloadTooLarge, PermissionDenied, SkiplockError, Unauthenticated, Unavailable)
from .jobs import Claim, Heartbeat, Job, JobSpec, Page, Report, Workflow  # noqa: E402
from .worker import Worker  # noqa: E402

__all__ = [
    "__version__", "Client", "Worker", "Complete", "Job", "JobSpec", "JobContext", "Page", "Workflow", "Claim", "Heartbeat",
    "Report", "SkiplockError", "NetworkError", "APIError", "InvalidArgument", "Unauthenticated", "PermissionDenied",
    "NotFound", "MethodNotAllowed", "Conflict", "PayloadTooLarge", "Unavailable", "JobInterrupted", "JobCancelled",
    "JobPaused", "LeaseLost", "WorkerShutdown", "Permanent", "Snooze", "RetryIn",
]
