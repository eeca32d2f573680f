"""A fork server ("zygote") for the tests that start ``rewindtui serve`` themselves.

A fresh ``python -m rewindtui.server.process.serve`` spends about 1.5 s of CPU importing
google-adk, a2a-sdk, sqlalchemy and google.genai before its full app is up. The zygote is one
helper process per pytest process (started on first use, stopped at exit) that has imported all
of that once; :func:`spawn` asks it to fork a child that runs the serve command's own ``main()``
with the given argv, environment, working directory and stdio, and returns a :class:`Forked`:
what ``subprocess.Popen`` gives (``pid``, ``poll()``, ``wait(timeout)``, ``send_signal()``,
``kill()``, ``terminate()``, ``stdin``/``stdout``/``stderr``, ``returncode``). :func:`run_script`
forks a child that runs a Python file instead, as ``python SCRIPT ARGV`` would (the benchmarks'
smoke runs, which import the server too).

How it is kept honest:

- The zygote is single-threaded and has no asyncio event loop when it forks: it checks, before
  each fork, that the kernel lists one thread for it (``/proc/self/task``) and that no event loop
  was set, and refuses to fork otherwise. Importing grpcio does not start gRPC's core (its
  threads and pollers start with the first channel or server; at import, grpc/grpc's
  ``src/python/grpcio/grpc/_cython/cygrpc.pyx`` ``_initialize()`` only installs an SSL roots
  callback: one thread after ``import grpc`` here, grpcio 1.85), so grpc is imported here with
  the rest; the thread check would catch a version that starts threads.
- The child gets exactly the stdio the client asked for: the client's pipe ends go over a unix
  socket (``SCM_RIGHTS``), become fds 0, 1 and 2, and ``sys.stdin``/``stdout``/``stderr`` are
  opened again on them as a fresh interpreter opens them. Its environment is exactly the one
  asked for (``os.environ`` cleared and filled: ``putenv``/``unsetenv`` underneath), its working
  directory and ``sys.argv`` those of ``python -m rewindtui.server.process.serve ARGS``.
- The child ends as an interpreter ends (its non-daemon threads joined, the ``atexit``
  functions, stdio flushed), then ``os._exit``: nothing of the zygote's own loop runs in it.
- A signal goes to the child through the zygote, which reaps it: no signal can reach another
  process that got the pid after the child was reaped. ``kill -9`` kills the server process
  itself (it is the forked child, nothing sits between). Each child's exit status comes back to
  its :class:`Forked` on the connection it was asked for on.
- The child dies with the zygote (``PR_SET_PDEATHSIG`` on Linux), and a dead zygote is an
  error (:class:`ZygoteDied`, with the end of its log), never a wait without end.

What differs from a process of its own: the child's parent is the zygote (``os.getppid()``), so
``--exit-on-stdin-eof`` sees its starter go only by its stdin's end, not by the pid; its
``/proc/PID/cmdline`` is the zygote's; modules the zygote imported are not imported again (an
import-time read of the environment sees the zygote's, which is the pytest process's). The
product's own start (``spawn_server``) is not run through here: its tests start real processes.
``REWINDTUI_TEST_NO_ZYGOTE=1`` makes :func:`spawn` start a real process instead (to compare).
"""

from __future__ import annotations

import atexit
import io
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

#: the command a forked child stands for (``-m`` of it)
SERVE_MODULE = "rewindtui.server.process.serve"
#: what the zygote imports before it forks: the serve command and its full app (the agent runtime)
PRELOAD = (SERVE_MODULE, "rewindtui.server.http.app")
#: and what a served turn imports later, lazily (the modules new in ``sys.modules`` after a server
#: started, answered two streamed turns and a task list; ADK's flows, the SQLite and PostgreSQL
#: drivers, authlib under ADK's auth, uvicorn's protocol): 0.39 s of CPU per forked server without
#: them, 0.20 s with them (a start, a turn, kill -9). One a later version lacks is left out.
WARM = (
    "rewindtui.server.http.front",
    "rewindtui.server.process.uvicorn_server",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.lifespan.on",
    "anyio._backends._asyncio",
    "aiosqlite",
    "sqlalchemy.dialects.sqlite.aiosqlite",
    "asyncpg",
    "sqlalchemy.dialects.postgresql.asyncpg",
    "google.adk.flows.llm_flows.auto_flow",
    "google.adk.workflow._workflow",
    "google.adk.workflow._llm_agent_wrapper",
    "google.adk.a2a.converters.event_converter",
    "google.adk.models.google_llm",
    "google.adk.auth.auth_preprocessor",
    "google.adk.agents.remote_a2a_agent",
    "google.adk.apps.compaction",
    "google.adk.memory.in_memory_memory_service",
    "google.adk.sessions._rewind_utils",
    "google.adk.telemetry.tracing",
    "google.adk.tools.agent_tool",
    "google.adk.tools.google_search_tool",
    "authlib.integrations.requests_client",
    "httpcore",
    "h2.connection",
    "tomllib",
)
#: set (to anything but "" or "0") to start real processes instead
OFF_ENV = "REWINDTUI_TEST_NO_ZYGOTE"
#: seconds a spawn waits for the zygote's answer (its first one includes the imports)
ANSWER_TIMEOUT = 120.0

PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
STDOUT = subprocess.STDOUT


class ZygoteDied(RuntimeError):
    """The zygote ended or stopped answering: the tests that use it fail with this."""


# -- the client side (the pytest process) ----------------------------------------------------------
class Zygote:
    """One zygote process, started on the first :meth:`spawn`; :meth:`stop` ends it and its children."""

    def __init__(self, preload: Sequence[str] = PRELOAD, warm: Sequence[str] = WARM) -> None:
        self.preload = tuple(preload)
        self.warm = tuple(warm)
        self.process: subprocess.Popen[bytes] | None = None
        self._ctl: socket.socket | None = None
        self._log: Path | None = None
        self._lock = threading.Lock()
        self._owner = os.getpid()
        self._dead: str | None = None

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fd, log = tempfile.mkstemp(prefix="rewindtui-zygote-", suffix=".log")
        self._log = Path(log)
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    str(theirs.fileno()),
                    *self.preload,
                    *(f"?{name}" for name in self.warm),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=fd,
                pass_fds=(theirs.fileno(),),
            )
        finally:
            os.close(fd)
            theirs.close()
        self._ctl = ours
        return ours

    def died(self, what: str, grace: float = 5.0) -> ZygoteDied:
        """The error for a zygote that ``what`` (and for every later use of it: one still running
        after ``grace`` seconds is killed, with the servers it forked)."""
        if self._dead is None:
            status = None
            if self.process is not None:
                if self.process.poll() is None:
                    try:  # ending already (its sockets closed first), or stuck: killed
                        self.process.wait(grace)
                    except subprocess.TimeoutExpired:
                        self.process.kill()
                status = self.process.wait()
            tail = ""
            if self._log is not None:
                try:
                    tail = self._log.read_text(errors="replace")[-3000:]
                except OSError:
                    pass
            self._dead = f"the test zygote {what} (its exit status: {status}); its log ends:\n{tail}"
        return ZygoteDied(self._dead)

    def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stdin: int | IO[Any] | None = None,
        stdout: int | IO[Any] | None = None,
        stderr: int | IO[Any] | None = None,
        text: bool = False,
        script: str | os.PathLike[str] | None = None,
    ) -> Forked:
        """A child running ``rewindtui serve`` with ``argv`` (the arguments after ``-m
        rewindtui.server.process.serve``), as ``subprocess.Popen`` would start it; with
        ``script``, a child running that Python file as ``python SCRIPT ARGV`` would."""
        fds, mine, close_after = _stdio(stdin, stdout, stderr)
        conn, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request = {
            "argv": list(argv),
            "env": dict(os.environ if env is None else env),
            "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(),
            "script": os.fspath(script) if script is not None else None,
        }
        try:
            with self._lock:
                if self._dead is not None:
                    raise ZygoteDied(self._dead)
                if os.getpid() != self._owner:
                    raise ZygoteDied("the test zygote belongs to another process (this one was forked from it)")
                ctl = self._ctl or self._start()
                try:
                    socket.send_fds(ctl, [b"s"], [theirs.fileno(), *fds])
                except ConnectionError as exc:  # (a bad fd of the caller's is an OSError of its own)
                    raise self.died(f"refused a request ({exc})") from None
            _send(conn, request)
        except BaseException:
            conn.close()
            for fd in mine.values():
                os.close(fd)
            raise
        finally:
            theirs.close()
            for fd in close_after:
                os.close(fd)
        command = [sys.executable, *([os.fspath(script)] if script is not None else ["-m", SERVE_MODULE]), *argv]
        forked = Forked(self, conn, command, text, mine)
        try:
            line = forked._line(time.monotonic() + ANSWER_TIMEOUT)
            if line is None:
                raise self.died(f"did not answer within {ANSWER_TIMEOUT:g} s")
            kind, _, value = line.partition(" ")
            if kind != "pid":
                raise self.died(f"could not fork: {value}", grace=0)
        except BaseException:
            forked._close_pipes()
            conn.close()
            raise
        forked.pid = int(value)
        return forked

    def stop(self, timeout: float = 30.0) -> int | None:
        """End the zygote (it kills and reaps the children still running); its exit status."""
        if os.getpid() != self._owner:  # a process forked from the one that started it: not its zygote
            return None
        with self._lock:
            if self._ctl is not None:
                self._ctl.close()
                self._ctl = None
            process, self.process = self.process, None
        if process is None:
            return None
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()
        finally:
            if self._log is not None:
                self._log.unlink(missing_ok=True)


def _stdio(stdin: Any, stdout: Any, stderr: Any) -> tuple[list[int], dict[str, int], list[int]]:
    """The three fds the child gets, the client's ends of the pipes asked for (by stream name),
    and the fds to close here once the zygote has them."""
    fds: list[int] = []
    mine: dict[str, int] = {}
    close_after: list[int] = []
    for index, (name, how) in enumerate((("stdin", stdin), ("stdout", stdout), ("stderr", stderr))):
        if how is None:
            fd = index  # inherited, as Popen does
        elif how == PIPE:
            read, write = os.pipe()
            fd, mine[name] = (read, write) if index == 0 else (write, read)
            close_after.append(fd)
        elif how == DEVNULL:
            fd = os.open(os.devnull, os.O_RDWR)
            close_after.append(fd)
        elif how == STDOUT and index == 2:
            fd = fds[1]
        elif isinstance(how, int):
            fd = how
        else:
            fd = how.fileno()
        fds.append(fd)
    return fds, mine, close_after


def _send(conn: socket.socket, request: dict[str, Any]) -> None:
    data = json.dumps(request).encode()
    conn.sendall(len(data).to_bytes(8, "big") + data)


class Forked:
    """A child the zygote forked: the part of ``subprocess.Popen`` the tests use."""

    def __init__(self, zygote: Zygote, conn: socket.socket, args: list[str], text: bool, pipes: dict[str, int]):
        self._zygote = zygote
        self._conn = conn
        self._buffer = b""
        self.args = args
        self.pid = 0
        self.returncode: int | None = None
        self.stdin: IO[Any] | None = None
        self.stdout: IO[Any] | None = None
        self.stderr: IO[Any] | None = None
        for name, fd in pipes.items():  # as Popen opens them
            if name == "stdin":
                self.stdin = io.TextIOWrapper(open(fd, "wb"), write_through=True) if text else open(fd, "wb")
            else:
                setattr(self, name, open(fd, "r" if text else "rb"))

    def __repr__(self) -> str:
        return f"<Forked pid={self.pid} returncode={self.returncode}>"

    # -- the connection: lines "pid N", "exit N", "sent", "gone" from the zygote
    def _line(self, deadline: float | None) -> str | None:
        """The next line from the zygote; None when ``deadline`` passed first. An "exit" line
        sets ``returncode`` (and is returned)."""
        while b"\n" not in self._buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._conn.settimeout(wait)
            try:
                chunk = self._conn.recv(4096)
            except (TimeoutError, BlockingIOError):  # (a timeout of 0 makes the socket non-blocking)
                return None
            except OSError as exc:
                raise self._zygote.died(f"dropped the connection of pid {self.pid} ({exc})") from None
            if not chunk:
                raise self._zygote.died(f"ended before pid {self.pid or '(not forked yet)'} did")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        text = line.decode()
        if text.startswith("exit "):
            self.returncode = int(text[5:])
            self._conn.close()
        return text

    def poll(self) -> int | None:
        if self.returncode is None:
            self._line(time.monotonic())  # only what is there already
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            if self._line(deadline) is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """``sig`` to the child, sent by the zygote (nothing once it has ended)."""
        if self.poll() is not None:
            return
        try:
            self._conn.sendall(f"signal {int(sig)}\n".encode())
        except OSError as exc:
            raise self._zygote.died(f"dropped the connection of pid {self.pid} ({exc})") from None
        while self.returncode is None:
            line = self._line(time.monotonic() + ANSWER_TIMEOUT)
            if line is None:
                raise self._zygote.died(f"did not answer a signal for pid {self.pid}")
            if line in ("sent", "gone"):
                return

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def _close_pipes(self) -> None:
        for pipe in (self.stdin, self.stdout, self.stderr):
            if pipe is not None:
                pipe.close()

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close_pipes()
        self.wait()


_shared: Zygote | None = None
_shared_lock = threading.Lock()


def shared() -> Zygote:
    """This process's zygote (started on its first spawn, stopped at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared._owner != os.getpid():
            _shared = Zygote()
            atexit.register(_shared.stop)
        return _shared


def enabled() -> bool:
    return os.environ.get(OFF_ENV, "") in ("", "0") and hasattr(socket, "send_fds") and hasattr(os, "fork")


def spawn(argv: Sequence[str], **popen: Any) -> Forked | subprocess.Popen[Any]:
    """``python -m rewindtui.server.process.serve ARGV`` forked from this process's zygote (a real
    process when :data:`OFF_ENV` is set). ``popen``: ``env``, ``cwd``, ``stdin``, ``stdout``,
    ``stderr``, ``text``, as ``subprocess.Popen`` takes them."""
    if not enabled():
        return subprocess.Popen([sys.executable, "-m", SERVE_MODULE, *argv], **popen)
    return shared().spawn(argv, **popen)


def run_script(script: str | os.PathLike[str], argv: Sequence[str], **popen: Any) -> Forked | subprocess.Popen[Any]:
    """``python SCRIPT ARGV`` forked from this process's zygote, for a script that imports the
    server as the serve command does (a benchmark): a real process when :data:`OFF_ENV` is set.
    The script runs from its first line (``runpy.run_path`` as ``__main__``, its folder first on
    ``sys.path``); what it imports that the zygote has imported is not imported again."""
    if not enabled():
        return subprocess.Popen([sys.executable, os.fspath(script), *argv], **popen)
    return shared().spawn(argv, script=script, **popen)


# -- the zygote process --------------------------------------------------------------------------
class _Child:
    def __init__(self, pid: int, conn: socket.socket) -> None:
        self.pid = pid
        self.conn: socket.socket | None = conn
        self.buffer = b""
        self.reaped = False


def _event_loop_set() -> bool:
    """An asyncio event loop was made and set in this process (by an import)."""
    asyncio = sys.modules.get("asyncio")
    policy = getattr(asyncio.events, "_event_loop_policy", None) if asyncio is not None else None
    local = getattr(policy, "_local", None)
    return getattr(local, "_loop", None) is not None


def _threads() -> int:
    """The threads the kernel lists for this process (the Python ones where /proc is missing)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _recv_request(conn: socket.socket) -> dict[str, Any]:
    conn.settimeout(30)
    data = b""
    while len(data) < 8 or len(data) < 8 + int.from_bytes(data[:8], "big"):
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("the client left before its request was complete")
        data += chunk
    conn.settimeout(None)
    return json.loads(data[8:])


def _serve(ctl: socket.socket) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl+C is the pytest process's to handle
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes select() through the wakeup fd
    selector = selectors.DefaultSelector()
    selector.register(ctl, selectors.EVENT_READ, None)
    selector.register(wake_r, selectors.EVENT_READ, None)
    children: dict[int, _Child] = {}
    me = os.getpid()

    def reply(child: _Child, text: str) -> None:
        if child.conn is None:
            return
        try:
            child.conn.sendall(text.encode() + b"\n")
        except OSError:
            drop(child)

    def drop(child: _Child) -> None:
        if child.conn is not None:
            selector.unregister(child.conn)
            child.conn.close()
            child.conn = None
        if child.reaped:
            children.pop(child.pid, None)

    def reap() -> None:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = children.get(pid)
            if child is None:
                continue
            child.reaped = True
            reply(child, f"exit {os.waitstatus_to_exitcode(status)}")
            if child.conn is None:
                children.pop(pid, None)

    def fork(fds: list[int]) -> None:
        if len(fds) != 4:  # not a request of Zygote.spawn's
            for fd in fds:
                os.close(fd)
            return
        conn = socket.socket(fileno=fds[0])
        stdio = fds[1:]
        try:
            request = _recv_request(conn)
            threads = _threads()
            if threads != 1:
                raise RuntimeError(f"the zygote runs {threads} threads: it does not fork")
            if _event_loop_set():
                raise RuntimeError("the zygote has an asyncio event loop: it does not fork")
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
        except Exception as exc:
            for fd in stdio:
                os.close(fd)
            try:
                conn.sendall(f"error {type(exc).__name__}: {exc}\n".encode())
            except OSError:
                pass
            conn.close()
            return
        if pid == 0:
            try:
                others = [c.conn for c in children.values() if c.conn is not None]
                for sock in (ctl, conn, *others):
                    sock.close()
                selector.close()
                signal.set_wakeup_fd(-1)
                os.close(wake_r)
                os.close(wake_w)
            finally:
                _child(request, stdio, me)  # never returns
        for fd in stdio:
            os.close(fd)
        child = _Child(pid, conn)
        children[pid] = child
        selector.register(conn, selectors.EVENT_READ, child)
        reply(child, f"pid {pid}")

    def on_request(child: _Child) -> None:
        assert child.conn is not None
        try:
            chunk = child.conn.recv(4096)
        except OSError:
            chunk = b""
        if not chunk:  # the client is done with it (the child runs on, as a Popen's does)
            drop(child)
            return
        child.buffer += chunk
        while b"\n" in child.buffer:
            line, child.buffer = child.buffer.split(b"\n", 1)
            kind, _, value = line.decode().partition(" ")
            if kind != "signal":
                continue
            if child.reaped:
                reply(child, "gone")
                continue
            try:
                os.kill(child.pid, int(value))
            except ProcessLookupError:  # ended, not reaped yet: its exit line follows
                pass
            reply(child, "sent")

    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is ctl:
                    try:
                        msg, fds, _flags, _addr = socket.recv_fds(ctl, 16, 8)
                    except OSError:
                        msg, fds = b"", []
                    if not msg:
                        return 0  # the pytest process is done (or gone)
                    fork(fds)
                elif key.fileobj == wake_r:
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                    reap()
                else:
                    on_request(key.data)
            reap()  # a SIGCHLD that came while the loop was busy
    finally:
        for child in list(children.values()):
            if not child.reaped:
                try:
                    os.kill(child.pid, signal.SIGKILL)
                    os.waitpid(child.pid, 0)
                except OSError:
                    pass


def _std_streams() -> None:
    """``sys.stdin``/``stdout``/``stderr`` opened on fds 0-2 as a fresh interpreter opens them
    (the encoding and errors of the zygote's own, which had the same environment)."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        old = getattr(sys, name)
        encoding = getattr(old, "encoding", None) or "utf-8"
        errors = getattr(old, "errors", None) or ("backslashreplace" if fd == 2 else "strict")
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: Any = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        stream = io.TextIOWrapper(buffered, encoding=encoding, errors=errors, newline="\n", line_buffering=fd == 2)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the zygote died before the line above
        os._exit(1)


def _child(request: dict[str, Any], stdio: list[int], zygote: int) -> None:
    """The forked child: become ``python -m rewindtui.server.process.serve ARGV`` (or ``python
    SCRIPT ARGV``), run it, end."""
    code = 1
    try:
        _die_with_parent(zygote)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        for fd in set(stdio):
            if fd > 2:
                os.close(fd)
        _std_streams()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # read again from this environment (TMPDIR), as a fresh process does
        try:
            result: Any = _run(request)
        except SystemExit as exc:
            result = exc.code
        if result is None:
            code = 0
        elif isinstance(result, int):
            code = result
        else:
            print(result, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:  # as the interpreter ends on one: killed by SIGINT
        import traceback

        traceback.print_exc()
        _end()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        os._exit(130)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    _end()
    os._exit(code & 0xFF)


def _run(request: dict[str, Any]) -> Any:
    script = request.get("script")
    if script is None:
        serve = sys.modules[SERVE_MODULE]
        sys.argv = [str(serve.__file__), *request["argv"]]
        sys.path[0] = os.getcwd()  # as -m sets it
        return serve.main(request["argv"])
    import runpy

    sys.argv = [script, *request["argv"]]
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as ``python SCRIPT`` sets it
    runpy.run_path(script, run_name="__main__")
    return None


def _end() -> None:
    """What the interpreter does at its end: join the non-daemon threads, run ``atexit``, flush."""
    try:
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass


def _main(argv: list[str]) -> int:
    ctl = socket.socket(fileno=int(argv[0]))
    sys.path[0] = os.getcwd()  # as ``-m`` has it (not this file's folder)
    for name in argv[1:]:  # "?NAME": imported where it exists
        try:
            __import__(name.removeprefix("?"))
        except ImportError:
            if not name.startswith("?"):
                raise
    import gc

    gc.collect()
    gc.freeze()  # what the imports made is shared with every child: keep the collector off it
    return _serve(ctl)


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
