"""The link a device session talks to: the :class:`Link` protocol, its :class:`StepResult` and :class:`LinkDown`.

A :class:`sfdf.sw.device.session.Device` does its frame bookkeeping over a link and nothing else: it pushes
frame packets (:mod:`sfdf.sw.device.codec`) and asks the link to run the device for a number of cycles, which
hands back the beats packets the sinks sent and when each source took each frame's last word. Every
backend is one link:

* :class:`sfdf.sw.device.simlink.SimLink`: the fast simulated device (:mod:`sfdf.sw.sim.fastsim`) in this process;
* :class:`sfdf.sw.device.process.ProcessLink`: the same, in a child process, over a socket pair;
* :class:`sfdf.sw.device.boardlink.BoardLink`: a board ``sfdf build`` made, over a UART.

Calls are typed methods of the protocol, so a link is checked statically (and at run time with
``isinstance(link, Link)``). A link whose other end is gone raises :class:`LinkDown`; the session
turns that into :class:`sfdf.sw.device.results.DeviceDied`. A call the device refuses raises
:class:`sfdf.sw.device.results.DeviceError` (or ``ValueError`` in process), and the device stays usable.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

__all__ = ["Link", "LinkDown", "StepResult"]


class LinkDown(Exception):
    """Raised by a link whose other end is gone; :class:`sfdf.sw.device.session.Device` turns it into
    :class:`sfdf.sw.device.results.DeviceDied`."""


class StepResult(NamedTuple):
    """What :meth:`Link.step` saw happen.

    Members
    -------
    cycles : int
        Cycles this step ran.
    reason : str
        Why it stopped: the simulator's ``"budget"``, ``"target"`` or ``"idle"``
        (:meth:`sfdf.sw.sim.fastsim.FastSim.run`), a board's ``"cycles"`` or ``"messages"``.
    now : int
        The device's cycle count after the step.
    packets : list of bytes
        Per sink (the codec's order), one beats packet of every beat the sink sent during the step.
    beat_cycles : list of list of int
        Per sink, the cycle of each of those beats.
    frame_ends : list of list of int
        Per source, the cycle at which it took the last word of each frame it finished during the step.
    last_accept : int
        The last cycle at which any source took a word (0: none during the step, on a board).
    """

    cycles: int
    reason: str
    now: int
    packets: list[bytes]
    beat_cycles: list[list[int]]
    frame_ends: list[list[int]]
    last_accept: int


@runtime_checkable
class Link(Protocol):
    """What a device session needs of its transport: frame packets in, beats packets out."""

    @property
    def pid(self) -> int | None:
        """The process serving the device (a test may kill it), or ``None``: this one, or a board."""
        ...

    def push(self, packets: bytes) -> None:
        """Queue every frame packet of ``packets`` (whole :mod:`sfdf.sw.device.codec` frame packets, in order).

        Raises
        ------
        sfdf.sw.device.results.DeviceError or ValueError
            The bytes are not whole frame packets, or the device cannot take them; nothing was queued.
        LinkDown
            The other end is gone.
        """
        ...

    def step(self, max_cycles: int, frames: int) -> StepResult:
        """Run the device until ``frames`` frame ends reached every sink (``0``: never) or for
        ``max_cycles`` cycles, whichever comes first, and report what happened.

        Raises
        ------
        LinkDown
            The other end is gone.
        """
        ...

    def set_pause(self, port: str, probability: float, seed: int, *, sink: bool) -> None:
        """Hold sink ``port``'s ``tready`` low (``sink``), or idle source ``port``, with ``probability``
        per cycle, in a pattern seeded by ``seed`` (tests of the simulated device).

        Raises
        ------
        sfdf.sw.device.results.DeviceError
            The device has no such knob (a board).
        """
        ...

    def close(self) -> None:
        """Release the device and whatever serves it (a process, a port)."""
        ...
