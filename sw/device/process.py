"""The simulated device in a child process: :class:`ProcessLink`, the :class:`~sfdf.sw.device.link.Link` to it, and
:func:`serve`, the child's side.

The child is started with ``subprocess`` (``python -c``), not ``multiprocessing``, so the caller's main
module is never imported again and scripts need no ``__main__`` guard; it exits when the parent closes
the link or dies (end of file on its socket). A crash of the model ends the child only: the parent's
next call raises :class:`~sfdf.sw.device.link.LinkDown`, which the session reports as
:class:`~sfdf.sw.device.results.DeviceDied`.

The wire. The two ends speak ``multiprocessing`` connections over a socket pair. The parent opens with
``(library, manifest, reset_cycles)``; the child answers ``(Reply.READY, pid)`` or ``(Reply.ERROR,
message)``. Then every request is ``(call, args, kwargs)``: ``call`` the value of a :class:`Call`, one
per method of the Link protocol. The child looks the value up in :class:`Call` and runs the method
:data:`SERVED` holds for it (a fixed table of :class:`~sfdf.sw.device.simlink.SimLink` methods, whose
signatures the request's arguments must fit), and answers ``(Reply.OK, value)`` or ``(Reply.ERROR,
message)``. A request that names no call, or whose arguments do not fit, is answered with an error
like any refused call, and the child goes on serving: nothing from the wire is looked up by name.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sfdf.sw.sim.fastsim import FastSim

from .codec import Codec
from .link import LinkDown, StepResult
from .results import DeviceDied, DeviceError
from .simlink import RESET_CYCLES, SimLink

__all__ = ["SERVED", "BadRequest", "Call", "ProcessLink", "Reply", "request", "serve"]


class Call(enum.Enum):
    """The calls a :class:`ProcessLink` makes of its child: one per :class:`~sfdf.sw.device.link.Link` method."""

    PUSH = "push"
    STEP = "step"
    SET_PAUSE = "set_pause"
    CLOSE = "close"


class Reply(enum.Enum):
    """The first item of each answer of the child."""

    #: The simulator is built and out of reset (the value: the child's pid).
    READY = "ready"
    #: The call returned (the value: what it returned).
    OK = "ok"
    #: The call, or the start, failed (the value: the error's type and message).
    ERROR = "error"


#: What the child runs for each call (:data:`Call.CLOSE` ends its loop instead).
SERVED: Mapping[Call, Callable[..., Any]] = MappingProxyType({
    Call.PUSH: SimLink.push,
    Call.STEP: SimLink.step,
    Call.SET_PAUSE: SimLink.set_pause,
})
_SIGNATURES = {call: inspect.signature(method) for call, method in SERVED.items()}
#: Errors of a call that go back to the parent (anything else is a bug that ends the child).
_REFUSALS = (RuntimeError, ValueError, KeyError, OSError)


class BadRequest(ValueError):
    """A request names no :class:`Call`, or its arguments do not fit the call's method."""


class ProcessLink:
    """A :class:`~sfdf.sw.device.simlink.SimLink` in a child Python process (module docstring).

    Parameters
    ----------
    library : path
        The harness library (:func:`sfdf.sw.sim.build.build`).
    manifest : mapping
        Its manifest.
    reset_cycles : int
        Cycles with reset high at the start.
    start_timeout_s : float
        How long the child may take to load the library and say it is ready.

    Members
    -------
    pid : int
        The child's process id (a test may kill it).

    Raises
    ------
    sfdf.sw.device.results.DeviceDied
        The child did not start, or died starting.
    sfdf.sw.device.results.DeviceError
        The child could not load the library.
    """

    def __init__(self, library: Path, manifest: Mapping, reset_cycles: int = RESET_CYCLES,
                 start_timeout_s: float = 120.0):
        ours, theirs = socket.socketpair()
        with theirs:
            self.process: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-c", "import sys; from sfdf.sw.device.process import serve; serve(int(sys.argv[1]))",
                 str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        self._conn = Connection(ours.detach())
        self.pid: int = self.process.pid
        try:
            self._conn.send((str(library), dict(manifest), reset_cycles))
            if not self._conn.poll(start_timeout_s):
                raise DeviceDied(f"the simulator process did not start within {start_timeout_s:g} s")
            status, value = self._conn.recv()
        except (EOFError, OSError):
            how = self._exit()
            self.close()
            raise DeviceDied(f"the simulator process failed to start ({how})") from None
        except DeviceDied:
            self.close()
            raise
        if status != Reply.READY.value:
            self.close()
            raise DeviceError(f"the simulator process failed to start: {value}")

    # -- the Link protocol -------------------------------------------------------------------------
    def push(self, packets: bytes) -> None:
        self._call(Call.PUSH, packets)

    def step(self, max_cycles: int, frames: int) -> StepResult:
        return self._call(Call.STEP, max_cycles, frames)

    def set_pause(self, port: str, probability: float, seed: int, *, sink: bool) -> None:
        self._call(Call.SET_PAUSE, port, probability, seed, sink=sink)

    def close(self) -> None:
        """Ask the child to stop, then make sure it has (idempotent)."""
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            self._conn.send((Call.CLOSE.value, (), {}))
        self._conn.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process = None

    # -- the wire ----------------------------------------------------------------------------------
    def _call(self, call: Call, *args, **kwargs) -> Any:
        try:
            self._conn.send((call.value, args, kwargs))
            status, value = self._conn.recv()
        except (EOFError, OSError):
            raise LinkDown(f"simulator process {self.pid} {self._exit()}") from None
        if status == Reply.ERROR.value:
            raise DeviceError(f"simulator process: {value}")
        return value

    def _exit(self) -> str:
        try:
            code = self.process.wait(1)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:
            return f"was killed by signal {signal.Signals(-code).name}"
        return f"exited with status {code}"


def request(message: object) -> tuple[Call, tuple, dict]:
    """A request off the wire, checked: its :class:`Call`, and arguments that fit the call's method.

    Raises
    ------
    BadRequest
        ``message`` is not ``(call, args, kwargs)`` with ``call`` the value of a :class:`Call`, or the
        arguments do not fit.
    """
    try:
        value, args, kwargs = message
        call = Call(value)
        args, kwargs = tuple(args), dict(kwargs)
    except (TypeError, ValueError):
        raise BadRequest(f"not a request (call, args, kwargs) of a known call: {message!r:.200}") from None
    if call is not Call.CLOSE:
        try:
            _SIGNATURES[call].bind(None, *args, **kwargs)  # None: the SimLink the method is bound to
        except TypeError as error:
            raise BadRequest(f"{call.value}: {error}") from None
    return call, args, kwargs


def serve(fd: int) -> None:
    """The child of :class:`ProcessLink`: one :class:`~sfdf.sw.device.simlink.SimLink`, serving calls until
    :data:`Call.CLOSE` or end of file on the socket ``fd``.

    Errors of a call (a bad request, bad arguments, the simulator refusing) go back to the parent; anything
    else is a bug that ends the process, which the parent reports as :class:`~sfdf.sw.device.results.DeviceDied`.
    """
    conn = Connection(fd)
    library, manifest, reset_cycles = conn.recv()
    try:
        link = SimLink(FastSim(library, manifest, reset_cycles), Codec(manifest))
    except _REFUSALS as error:  # reported to the parent, which raises it
        conn.send((Reply.ERROR.value, f"{type(error).__name__}: {error}"))
        return
    conn.send((Reply.READY.value, os.getpid()))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        try:
            call, args, kwargs = request(message)
            if call is Call.CLOSE:
                break
            conn.send((Reply.OK.value, SERVED[call](link, *args, **kwargs)))
        except _REFUSALS as error:  # the parent raises DeviceError with it
            conn.send((Reply.ERROR.value, f"{type(error).__name__}: {error}"))
    link.close()
