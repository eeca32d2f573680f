"""The CPU a command and every process it starts use, those that leave it included (Linux).

    python bench/descendants_cpu.py python bench/bench_launch.py --quick

``/usr/bin/time`` counts the processes its command waits for. A tmux server is not one of them:
it detaches from the client that starts it (its parent becomes init), and the apps a bench runs
in a terminal are the tmux server's children, so their CPU is counted nowhere. Here this process
is made a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): a descendant whose parent ends is
re-parented to it rather than to init, and it reaps every one of them, so the CPU of all of them
is in its ``RUSAGE_CHILDREN``. It waits until no descendant is left (a bench's own tmux server
ends with its last session), up to ``--linger`` seconds after the command ends.

Prints one line to stderr: ``wall W s  cpu C s (user U + sys S)  exit N``.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--linger", type=float, default=30.0, help="seconds to wait for descendants after the command")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("a command to run is needed")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    start = time.perf_counter()
    code = subprocess.call(args.command)
    wall = time.perf_counter() - start
    deadline = time.monotonic() + args.linger
    left = False
    while True:  # reap the orphans re-parented here, until none is left
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                left = True
                break
            time.sleep(0.05)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    note = "  (descendants still running, not counted)" if left else ""
    print(
        f"wall {wall:.1f} s  cpu {used.ru_utime + used.ru_stime:.1f} s "
        f"(user {used.ru_utime:.1f} + sys {used.ru_stime:.1f})  exit {code}{note}",
        file=sys.stderr,
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
