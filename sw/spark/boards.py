"""Boards for Spark tasks: which device a task opens (``sfdf spark --device``), and how it gets one alone.

``DEVICE`` is one of

* ``sim``: the fast simulated device (:func:`sfdf.sw.device.open_device`, the default);
* ``serial:PORT[,PORT...]``: boards ``sfdf build -o DIR`` made (``--board-dir DIR``), on these serial ports
  (real boards, or ``sfdf board-sim DIR --pty``'s pseudo-terminals). A task *claims* one: it opens the
  ports in turn, starting at its partition's, and takes the first that opens. The board device locks the
  port while it is open (pyserial's ``exclusive``, an ``flock``), so a board is never shared by two tasks,
  and a busy, missing or silent board is passed over; with every board busy the task waits for one;
* ``resource:fpga``: Spark's own accelerator scheduling. Workers advertise their boards
  (``spark.worker.resource.fpga.amount`` and the discovery script ``sfdf-discover-fpga``,
  :mod:`sfdf.sw.spark.discover`), each task asks for one (``spark.task.resource.fpga.amount = 1``), and opens
  the port Spark assigned it (``TaskContext.resources()["fpga"].addresses``). Spark keeps a dead board's
  address in its pool until the worker restarts, so a task whose board does not answer claims another of
  its host's boards (the discovery script's list) the way ``serial:`` tasks do, never one in use.

A board that dies mid-partition fails its task (:class:`sfdf.sw.device.results.DeviceDied`); Spark's retry runs
the partition again from its first frame on another board, and the job's commit protocol keeps exactly
one copy of each result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sfdf.gen.errors import UserError

__all__ = ["CLAIM_TIMEOUT_S", "RESOURCE", "DeviceChoice", "claim", "parse_device"]

#: Spark's resource name for boards.
RESOURCE = "fpga"
#: How long a task waits for a free board before it fails (and Spark retries it).
CLAIM_TIMEOUT_S = 600.0
_CLAIM_POLL_S = 0.2


@dataclass(frozen=True)
class DeviceChoice:
    """A parsed ``--device``: ``kind`` is ``sim``, ``serial`` or ``resource``; ``ports`` the serial ports."""

    kind: str
    ports: tuple[str, ...] = ()

    @property
    def board(self) -> bool:
        return self.kind != "sim"


def parse_device(text: str) -> DeviceChoice:
    """``--device``'s value (module docstring); a one-line :class:`UserError` for anything else."""
    if text == "sim":
        return DeviceChoice("sim")
    if text == f"resource:{RESOURCE}":
        return DeviceChoice("resource")
    if text.startswith("serial:"):
        ports = tuple(p.strip() for p in text.removeprefix("serial:").split(","))
        if ports and all(ports) and len(set(ports)) == len(ports):
            return DeviceChoice("serial", ports)
    raise UserError(text, "--device", "is not a device",
                    f"use sim, serial:PORT[,PORT...] (distinct ports) or resource:{RESOURCE} (docs/host.md, \"Boards\")")


def claim(open_port, ports: tuple[str, ...], first: int = 0, timeout_s: float = CLAIM_TIMEOUT_S):
    """``open_port(port)`` for the first of ``ports`` (from index ``first`` on, round) that opens; waits for
    one while every open fails, up to ``timeout_s``.

    Raises
    ------
    sfdf.sw.device.results.DeviceError
        No board opened in time (the last failure of each port in the message).
    """
    from sfdf.sw.device.results import DeviceError

    deadline = time.monotonic() + timeout_s
    failures: dict[str, str] = {}
    order = ports[first % len(ports):] + ports[:first % len(ports)]
    while True:
        for port in order:
            try:
                return open_port(port)
            except (DeviceError, OSError) as error:
                failures[port] = str(error)
        if time.monotonic() >= deadline:
            raise DeviceError(f"no board of {', '.join(ports)} could be had within {timeout_s:g} s: "
                              + "; ".join(f"{port}: {why}" for port, why in failures.items()))
        time.sleep(_CLAIM_POLL_S)
