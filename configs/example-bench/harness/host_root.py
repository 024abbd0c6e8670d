"""A Harbor environment that runs a trial in a throwaway root on this host. NOT a security boundary.

Harbor has no "run on this machine" environment, and the example bench has no Docker images to build,
so this class (passed to Harbor as `--env harness.host_root:HostRootEnvironment`, which `HARBOR_ENV`
selects) gives each trial a private root made of the host itself:

- a holder process in new mount and PID namespaces (`unshare --mount --pid --fork`) mounts a tmpfs,
  lays a copy-on-write overlay of the host's system folders (`/usr`, `/etc`, `/opt`, `/var`, and
  `/bin`, `/lib`… or their links) over it, mounts `/proc` and binds `/dev`;
- every command runs `chroot`ed into that root inside those namespaces (`nsenter`), so what a trial
  writes, even into `/usr`, lands in the tmpfs and never on the host;
- the task's `environment/Dockerfile` is replayed in it: `WORKDIR`, `ENV`, `COPY` (from the
  `environment/` build context) and `RUN`. `FROM` names the image the host stands in for; other
  instructions (`USER`, `ARG`, `LABEL`, `CMD`…) are ignored;
- `stop()` kills the holder: the PID namespace takes every process of the trial with it, and the
  mount namespace its tmpfs and overlays. The holder also dies with Harbor (parent-death signal).

It needs root. It is not isolation: the trial sees the host's network, devices and processes' files
through `/dev`, runs as root, and shares the kernel. It exists so the bench's scripted agent stand-in
can run inside real Harbor; never use it to run a real agent or untrusted code.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shlex
import shutil
import signal
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult, SandboxBuildFailedError

TYPE = "host-root"
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "opt", "var")
EMPTY_DIRS = ("tmp", "root", "home", "run", "proc", "dev", "logs")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TOOLS = ("unshare", "nsenter", "chroot", "mount", "tar", "setpriv")
START_TIMEOUT_SEC = 30
KILLED_WAIT_SEC = 10


class HostRootError(RuntimeError):
    """The throwaway root could not be made or used."""


@dataclass
class Image:
    """What the Dockerfile replay leaves behind for later commands: the working directory and ENV."""

    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)


def dockerfile_instructions(text: str) -> Iterator[tuple[str, str]]:
    """(INSTRUCTION, arguments) of each instruction, continuation lines joined and comments dropped."""
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        if whole:
            keyword, _, rest = whole.partition(" ")
            yield keyword.upper(), rest.strip()
    if pending.strip():
        keyword, _, rest = pending.strip().partition(" ")
        yield keyword.upper(), rest.strip()


def env_pairs(arguments: str) -> dict[str, str]:
    """`ENV A=1 B="two words"` or the older `ENV A one value`."""
    words = shlex.split(arguments)
    if words and "=" not in words[0]:
        return {words[0]: arguments.partition(" ")[2].strip()}
    return dict(word.split("=", 1) for word in words if "=" in word)


def _holder_script(top: str) -> str:
    """The namespace holder: build the root on a tmpfs at `top`, say its host PID, then wait forever."""
    q = shlex.quote
    root = f"{top}/root"
    lines = ["set -e", f"mount -t tmpfs -o mode=755 harbor-host-root {q(top)}", f"mkdir -p {q(root)}"]
    for name in SYSTEM_DIRS:
        host = Path("/") / name
        if host.is_symlink():
            lines.append(f"ln -s {q(os.readlink(host))} {q(f'{root}/{name}')}")
        elif host.is_dir():
            upper, work, target = f"{top}/upper/{name}", f"{top}/work/{name}", f"{root}/{name}"
            lines.append(f"mkdir -p {q(upper)} {q(work)} {q(target)}")
            options = f"lowerdir={host},upperdir={upper},workdir={work}"
            lines.append(f"mount -t overlay overlay -o {q(options)} {q(target)}")
    lines.append("mkdir -p " + " ".join(q(f"{root}/{name}") for name in EMPTY_DIRS))
    lines += [
        f"chmod 1777 {q(root)}/tmp",
        f"mount -t proc proc {q(root)}/proc",
        f"mount --rbind /dev {q(root)}/dev",
        "read -r pid rest < /proc/self/stat",  # a builtin: the shell's own PID as the host sees it
        'echo "ready $pid"',
        "exec sleep infinity",
    ]
    return "\n".join(lines)


class HostRootEnvironment(BaseEnvironment):
    """One trial's throwaway root on this host (see the module docstring: not a security boundary)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._top: str | None = None
        self._holder: asyncio.subprocess.Process | None = None
        self._pid: int | None = None
        self._image = Image()

    @staticmethod
    def type() -> str:
        return TYPE

    @classmethod
    def preflight(cls) -> None:
        missing = [tool for tool in TOOLS if shutil.which(tool) is None]
        if os.geteuid() != 0 or missing:
            why = f"missing {', '.join(missing)}" if missing else "not running as root"
            raise SystemExit(f"{TYPE} environment needs root and {', '.join(TOOLS)}: {why}")

    def _validate_definition(self) -> None:
        if not (self.environment_dir / "Dockerfile").is_file():
            raise FileNotFoundError(f"{self.environment_dir / 'Dockerfile'} not found")

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self, force_build: bool) -> None:
        self._top = tempfile.mkdtemp(prefix="harbor-host-root-")
        # setpriv: SIGKILL when Harbor goes, so no holder outlives its trial (set by a program, not by
        # a preexec_fn: Python code between fork and exec can deadlock in a process with threads).
        self._holder = await asyncio.create_subprocess_exec(
            "setpriv", "--pdeathsig", "KILL", "--",
            "unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
            "sh", "-c", _holder_script(self._top),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # a SIGINT to Harbor's process group is for Harbor, not the root
        )  # fmt: skip
        assert self._holder.stdout is not None and self._holder.stderr is not None
        try:
            line = await asyncio.wait_for(self._holder.stdout.readline(), START_TIMEOUT_SEC)
        except TimeoutError:
            line = b""
        word, _, pid = line.decode().strip().partition(" ")
        if word != "ready" or not pid.isdigit():
            await self._kill_holder()
            error = await self._holder.stderr.read()
            raise HostRootError(f"could not make the trial's root: {error.decode(errors='replace').strip()}")
        self._pid = int(pid)
        await self._replay(self.environment_dir / "Dockerfile")
        await self._run(["mkdir", "-p", "/logs/agent", "/logs/verifier", "/logs/artifacts"])

    async def stop(self, delete: bool) -> None:
        await self._kill_holder()
        if self._top is not None:
            with contextlib.suppress(OSError):
                os.rmdir(self._top)  # empty on the host: the tmpfs lived in the holder's namespace
            self._top = None

    async def _kill_holder(self) -> None:
        holder = self._holder
        if holder is None:
            return
        for pid in (self._pid, holder.pid):
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        await holder.wait()
        self._pid = None

    # --- the Dockerfile --------------------------------------------------------------------------

    async def _replay(self, dockerfile: Path) -> None:
        for keyword, arguments in dockerfile_instructions(dockerfile.read_text()):
            if keyword == "WORKDIR":
                self._image.workdir = self._in_root(arguments)
                await self._run(["mkdir", "-p", self._image.workdir])
            elif keyword == "ENV":
                self._image.env.update(env_pairs(arguments))
            elif keyword == "COPY":
                await self._copy(arguments)
            elif keyword == "RUN":
                result = await self.exec(arguments, user="root")
                if result.return_code != 0:
                    output = (result.stdout or "") + (result.stderr or "")
                    raise SandboxBuildFailedError(f"RUN {arguments} exited {result.return_code}: {output}")

    async def _copy(self, arguments: str) -> None:
        """`COPY [--flags] <src>... <dest>` from the build context (`environment/`)."""
        words = [word for word in shlex.split(arguments) if not word.startswith("--")]
        *sources, dest = words
        for source in sources:
            path = (self.environment_dir / source).resolve()
            if not path.is_relative_to(self.environment_dir.resolve()):
                raise SandboxBuildFailedError(f"COPY {source}: outside the build context")
            if path.is_dir():
                await self.upload_dir(path, self._in_root(dest))
            elif dest.endswith("/") or len(sources) > 1:
                await self.upload_file(path, f"{self._in_root(dest)}/{path.name}")
            else:
                await self.upload_file(path, self._in_root(dest))

    def _in_root(self, path: str) -> str:
        """A path of the Dockerfile or of Harbor, made absolute against the current WORKDIR."""
        return str(PurePosixPath(self._image.workdir, path))

    # --- commands and files ----------------------------------------------------------------------

    def _argv(self, argv: list[str], user: str | int | None) -> list[str]:
        if self._pid is None or self._top is None:
            raise HostRootError("the environment is not started")
        chroot = ["chroot"]
        if user not in (None, "root", 0, "0"):
            chroot.append(f"--userspec={user}")
        return ["nsenter", "-t", str(self._pid), "-m", "-p", "--", *chroot, f"{self._top}/root", *argv]

    async def _run(
        self,
        argv: list[str],
        *,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        user: str | int | None = None,
        timeout_sec: float | None = None,
    ) -> tuple[int, bytes, bytes]:
        """Run `argv` in the root; on timeout or cancellation its whole process group is killed."""
        process = await _start(
            self._argv(argv, user),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            env={"PATH": DEFAULT_PATH, "HOME": "/root", **self._image.env, **(env or {})},
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(stdin), timeout_sec)
        except TimeoutError:
            _kill_group(process)
            await _ended(process)
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
        except BaseException:
            _kill_group(process)
            raise
        return process.returncode or 0, stdout, stderr

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        script = f"cd {shlex.quote(cwd or self._image.workdir)} || exit 1\n{command}"
        code, stdout, stderr = await self._run(
            ["bash", "-c", script],
            env=self._merge_env(env),
            user=self._resolve_user(user),
            timeout_sec=timeout_sec,
        )
        return ExecResult(
            stdout=stdout.decode(errors="replace"), stderr=stderr.decode(errors="replace"), return_code=code
        )

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = PurePosixPath(self._in_root(target_path))
        await self._untar(_tar_of([(Path(source_path), target.name)]), str(target.parent))

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        source = Path(source_dir)
        members = [(path, str(path.relative_to(source))) for path in sorted(source.rglob("*"))]
        await self._untar(_tar_of(members), self._in_root(target_dir))

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        code, data, stderr = await self._run(["cat", "--", source_path])
        if code != 0:
            raise FileNotFoundError(f"{source_path}: {stderr.decode(errors='replace').strip()}")
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        Path(target_path).write_bytes(data)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        code, data, stderr = await self._run(["tar", "-C", source_dir, "-cf", "-", "."])
        if code != 0:
            raise FileNotFoundError(f"{source_dir}: {stderr.decode(errors='replace').strip()}")
        Path(target_dir).mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            archive.extractall(target_dir, filter="tar")

    async def _untar(self, archive: bytes, target_dir: str) -> None:
        code, _, stderr = await self._run(
            ["sh", "-c", 'mkdir -p "$1" && tar -C "$1" -xf -', "untar", target_dir], stdin=archive
        )
        if code != 0:
            raise HostRootError(f"copy into {target_dir} failed: {stderr.decode(errors='replace').strip()}")


def _tar_of(members: list[tuple[Path, str]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path, name in members:
            archive.add(path, arcname=name, recursive=False)
    return buffer.getvalue()


async def _start(argv: list[str], **options: Any) -> asyncio.subprocess.Process:
    """Start a command in a process group of its own. A trial cancelled while the command starts (a
    SIGINT to Harbor) gets its CancelledError at once and the command's group is killed as soon as it
    has started: left to asyncio, only the first process (`nsenter`) would be killed, the command
    would run on in the root, and the cancellation would wait for it to end."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            **options,
        )
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(_kill_started)
        raise


def _kill_started(starting: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not starting.cancelled() and starting.exception() is None:
        _kill_group(starting.result())


async def _ended(process: asyncio.subprocess.Process) -> None:
    """Wait for a killed command, a bounded time: asyncio also waits for its pipes to close, which a
    process that left the group could hold open."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), KILLED_WAIT_SEC)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
