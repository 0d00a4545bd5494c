"""The process backend's launcher: one command in a temporary root, isolated the way a container is.

:mod:`.process` runs this file as root (``python3 -I launch.py CONFIG``); it imports only the standard library.
The launcher dies with the runner (``PR_SET_PDEATHSIG``), unshares the mount, UTS, IPC and PID namespaces (and the
network namespace for mode ``none``), makes every mount private *before* mounting anything (so nothing it mounts is
seen outside), and forks the namespace's first process. That process bind-mounts the host's programs read-only
(nosuid) into the root with a few device nodes, ``/proc``, ``/sys`` and the spec's mounts, raises loopback, sets
the hostname, chroots, drops to the spec's user with no new privileges, and execs the command. The launcher exits
with the command's status (128+N for signal N, as a container does), so killing its process group kills the
namespace's first process, and with it everything in the namespace.

CONFIG is JSON: root, argv, env, workdir, uid, gid, hostname, isolate_network, system (top-level host directories
to bind), mounts ([source, target, read_only]), parent (the runner's pid).
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import signal
import socket
import struct
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
# Exit status when the command never started (as a shell reports "command not found").
NOT_STARTED = 127

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int) -> None:
    encoded = [value.encode() if value is not None else None for value in (source, target, kind)]
    _check(_libc.mount(encoded[0], encoded[1], encoded[2], flags, None), f"mounting {target}")


def _bind(source: str, target: str, read_only: bool, extra: int = 0) -> None:
    _mount(source, target, None, MS_BIND | MS_REC)
    if read_only or extra:
        _mount(None, target, None, MS_REMOUNT | MS_BIND | extra | (MS_RDONLY if read_only else 0))


def _die_with_parent() -> None:
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "asking to die with the parent")


def _loopback_up() -> None:
    """Bring ``lo`` up in the new network namespace (it starts down), as a container's is."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(probe, siocgifflags, request))[1]
        fcntl.ioctl(probe, siocsifflags, struct.pack("16sH22x", b"lo", flags | iff_up))


def _enter(config: dict[str, Any]) -> None:
    """In the namespace's first process: build the view, become the user, exec the command."""
    _die_with_parent()
    root = config["root"]
    socket.sethostname(config["hostname"])
    for name in config["system"]:
        _bind(f"/{name}", f"{root}/{name}", read_only=True, extra=MS_NOSUID | MS_NODEV)
    for device in DEVICES:
        if os.path.exists(f"/dev/{device}"):
            _bind(f"/dev/{device}", f"{root}/dev/{device}", read_only=False)
    _mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _mount("sysfs", f"{root}/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for source, target, read_only in config["mounts"]:
        _bind(source, f"{root}{target}", read_only=read_only, extra=MS_NOSUID)
    if config["isolate_network"]:
        _loopback_up()
    os.chroot(root)
    os.chdir(config["workdir"])
    os.setgroups([])
    os.setgid(config["gid"])
    os.setuid(config["uid"])
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "setting no-new-privileges")
    _die_with_parent()  # changing credentials cleared it
    for ignored in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; a container's command does not
        signal.signal(ignored, signal.SIG_DFL)
    argv = config["argv"]
    os.execvpe(argv[0], argv, config["env"])


def main() -> None:
    config = json.loads(sys.argv[1])
    _die_with_parent()
    if os.getppid() != config["parent"]:
        os._exit(NOT_STARTED)  # the runner died before we asked to die with it
    flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID
    _check(_libc.unshare(flags | (CLONE_NEWNET if config["isolate_network"] else 0)), "unsharing namespaces")
    # Every mount below is private to this namespace: nothing propagates back to the runner's view of the root.
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    child = os.fork()
    if child == 0:
        try:
            _enter(config)
        except BaseException as exc:
            print(f"cannot start {config['argv'][0]}: {exc}", file=sys.stderr, flush=True)
        os._exit(NOT_STARTED)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


if __name__ == "__main__":
    main()
