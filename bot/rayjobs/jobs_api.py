"""A small typed client for Ray's Jobs REST API (the dashboard's `/api/jobs/`), as Ray 2.60 serves it.

The bot speaks to a Ray cluster over HTTP only: Ray is no dependency of the bot. Every call has a
bounded timeout, and every failure is one of three exceptions a caller can act on: the head did not
answer (`RayUnreachable`: retry later, the jobs may still run), it answered with an error
(`RayRefused`), or it does not know the job (`RayJobNotFound`: after a head restart, a lost lane).
The token is a SecretStr sent as `Authorization: Bearer …`; no message, log or repr holds it, nor any
environment variable of a job (Ray's error text is cut to its last line and the token masked).
"""

from __future__ import annotations

import enum
import logging
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from bot.domain.errors import InfraError

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SEC = 10.0
_CONNECT_TIMEOUT_SEC = 5.0
_MESSAGE_CHARS = 300
# Ray answers a second submit of the same submission_id with HTTP 500 and this text.
_DUPLICATE = "already exists"


class RayJobsError(InfraError):
    """A call to Ray's Jobs API failed."""


class RayUnreachable(RayJobsError):
    """The head did not answer: no connection, or no reply within the timeout."""


class RayRefused(RayJobsError):
    """The head answered with an error status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class RayJobNotFound(RayRefused):
    """The head does not know this job (never submitted, deleted, or the head restarted since)."""


class JobStatus(enum.StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    STOPPED = "STOPPED"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"

    @property
    def terminal(self) -> bool:
        return self in (JobStatus.STOPPED, JobStatus.SUCCEEDED, JobStatus.FAILED)


class JobInfo(BaseModel):
    """One job as Ray reports it. Times are Ray's epoch milliseconds; `error_type` names why Ray failed
    a job itself (e.g. `JOB_SUPERVISOR_ACTOR_START_TIMEOUT`), None when the entrypoint decided."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    submission_id: str
    status: JobStatus
    entrypoint: str = ""
    message: str | None = None
    error_type: str | None = None
    start_time: int | None = None
    end_time: int | None = None
    driver_exit_code: int | None = None
    metadata: dict[str, str] | None = None

    @property
    def started_at(self) -> datetime | None:
        return _from_millis(self.start_time)

    @property
    def ended_at(self) -> datetime | None:
        return _from_millis(self.end_time)


def _from_millis(value: int | None) -> datetime | None:
    return None if not value else datetime.fromtimestamp(value / 1000, tz=UTC)


class JobSubmission(BaseModel):
    """What `submit` sends. `env_vars` become the job's `runtime_env.env_vars`; `resources` are the
    entrypoint's custom resources (e.g. {"csb_slot": 1}); the entrypoint takes no CPU unless asked."""

    model_config = ConfigDict(frozen=True)

    submission_id: str = Field(min_length=1)
    entrypoint: str = Field(min_length=1)
    env_vars: dict[str, str] = Field(default_factory=dict, repr=False)
    num_cpus: float | None = Field(default=None, ge=0)
    resources: dict[str, float] | None = None
    metadata: dict[str, str] = Field(default_factory=dict)

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "entrypoint": self.entrypoint,
            "submission_id": self.submission_id,
            "runtime_env": {"env_vars": dict(self.env_vars)},
            "metadata": dict(self.metadata),
        }
        if self.num_cpus is not None:
            body["entrypoint_num_cpus"] = self.num_cpus
        if self.resources:
            body["entrypoint_resources"] = dict(self.resources)
        return body


class Submitted(enum.Enum):
    """`NEW`: this call created the job. `ALREADY`: a job with that submission_id existed (an earlier
    submit whose answer was lost, or one made before a restart): read it with `job()`."""

    NEW = "new"
    ALREADY = "already"


class RayVersion(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    ray_version: str
    version: str = ""
    session_name: str = ""


class RayJobsClient:
    """One head's Jobs API. Use as `async with RayJobsClient(url, token) as ray: ...`, or call
    `close()`; one aiohttp session is kept for all calls."""

    def __init__(
        self, address: str, token: SecretStr | None = None, *, timeout_sec: float = DEFAULT_TIMEOUT_SEC
    ) -> None:
        self.address = address.rstrip("/")
        self._token = token
        self._timeout = aiohttp.ClientTimeout(
            total=timeout_sec, sock_connect=min(_CONNECT_TIMEOUT_SEC, timeout_sec)
        )
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"RayJobsClient({self.address!r}, token={'set' if self._token else 'none'})"

    async def __aenter__(self) -> RayJobsClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def version(self) -> RayVersion:
        return RayVersion.model_validate(await self._call("GET", "/api/version"))

    async def alive_node_resources(self) -> list[dict[str, float]]:
        """Each live node's total resources, from the dashboard's state API (names as Ray spells them)."""
        answer = await self._call("GET", "/api/v0/nodes?detail=1")
        data = answer.get("data", {}) if isinstance(answer, dict) else {}
        listing = data.get("result", {}) if isinstance(data, dict) else {}
        nodes = listing.get("result", []) if isinstance(listing, dict) else []
        return [
            {str(name): float(value) for name, value in node.get("resources_total", {}).items()}
            for node in nodes
            if isinstance(node, dict) and node.get("state") == "ALIVE"
        ]

    async def submit(self, submission: JobSubmission) -> Submitted:
        """Submit a job; a submission_id Ray already knows is `Submitted.ALREADY`, never an error."""
        try:
            await self._call("POST", "/api/jobs/", json=submission.payload())
        except RayRefused as exc:
            if exc.status == 500 and _DUPLICATE in str(exc):
                log.info("ray job %s was already submitted", submission.submission_id)
                return Submitted.ALREADY
            raise
        return Submitted.NEW

    async def list_jobs(self) -> list[JobInfo]:
        """Every submitted job the head knows, in one request (drivers run by hand are left out)."""
        answer = await self._call("GET", "/api/jobs/")
        return [JobInfo.model_validate(job) for job in answer if job.get("submission_id")]

    async def job(self, submission_id: str) -> JobInfo:
        return JobInfo.model_validate(await self._call("GET", f"/api/jobs/{submission_id}"))

    async def stop(self, submission_id: str) -> bool:
        """Ask Ray to stop the job; False when it had already ended."""
        answer = await self._call("POST", f"/api/jobs/{submission_id}/stop")
        return bool(answer.get("stopped"))

    async def delete(self, submission_id: str) -> bool:
        """Forget an ended job (Ray refuses a running one: RayRefused)."""
        answer = await self._call("DELETE", f"/api/jobs/{submission_id}")
        return bool(answer.get("deleted"))

    async def logs(self, submission_id: str) -> str:
        """The job's own log on its node (the entrypoint's output, not the lane's log file)."""
        answer = await self._call("GET", f"/api/jobs/{submission_id}/logs")
        return str(answer.get("logs", ""))

    async def _call(self, method: str, path: str, json: dict[str, Any] | None = None) -> Any:
        session = self._session_for_calls()
        try:
            async with session.request(method, self.address + path, json=json) as response:
                text = await response.text()
                if response.status >= 400:
                    raise self._refused(method, path, response.status, text)
                return await response.json(content_type=None)
        except TimeoutError:
            raise RayUnreachable(f"Ray head {self.address} did not answer {method} {path} in time") from None
        except aiohttp.ContentTypeError:
            raise RayRefused(f"Ray head {self.address}: {method} {path} answered no JSON", 502) from None
        except aiohttp.ClientConnectionError as exc:
            reason = self._mask(str(exc) or type(exc).__name__)
            raise RayUnreachable(f"Ray head {self.address} unreachable: {reason}") from None
        except ValueError:
            raise RayRefused(f"Ray head {self.address}: {method} {path} answered no JSON", 502) from None

    def _session_for_calls(self) -> aiohttp.ClientSession:
        if self._session is None:
            headers = {}
            if self._token is not None:
                headers["Authorization"] = f"Bearer {self._token.get_secret_value()}"
            self._session = aiohttp.ClientSession(timeout=self._timeout, headers=headers)
        return self._session

    def _refused(self, method: str, path: str, status: int, text: str) -> RayRefused:
        """Ray's error text is often a whole traceback: its last line says what went wrong."""
        lines = [line.strip() for line in text.strip().splitlines() if line.strip().strip(".")]
        reason = self._mask(lines[-1] if lines else "")[:_MESSAGE_CHARS]
        message = f"Ray head {self.address}: {method} {path} answered HTTP {status}: {reason}"
        kind = RayJobNotFound if status == 404 else RayRefused
        return kind(message, status)

    def _mask(self, text: str) -> str:
        secret = self._token.get_secret_value() if self._token is not None else ""
        return text.replace(secret, "***") if secret else text
