"""The board device: :mod:`sfdf.sw.device`'s API over a serial link to a board that ``sfdf build`` made.

    with open_device("build/boards/variance-ulx3s-85f/variance.json", backend="serial:/dev/ttyUSB0") as device:
        device.send_frames(enumerate(frames))
        for result in device.results():
            print(result.frame_id, result.fields)

:func:`open_board` reads ``<name>.board.json`` beside the manifest (:mod:`sfdf.boards.facts`), opens the
port at the board's baud rate and resets the board (:class:`sfdf.sw.device.boardlink.BoardLink`: the link, its
acknowledgements, flow control and clock).

Time. The device API counts cycles; a board's are its clock's, read from the wall clock
(``clk_hz`` of ``<name>.board.json``): ``timeout_cycles`` is a budget of board clock cycles after a
frame's last byte has left the host (its transmission time at the baud rate included). The default is
two seconds' worth, because USB serial adapters hold bytes back for up to 16 ms. On a pseudo-terminal (a
simulated board) it is thirty seconds' worth: the simulation runs 60 (RTL) to 1,300 (netlist) times slower
than the board's clock, while the link counts the board's cycles by the wall clock. The hello after a
break is waited for two seconds, or thirty on a pseudo-terminal (a simulated board's process may wait
for the CPU of a loaded machine).

On a pseudo-terminal (``sfdf board-sim --pty``, a simulated board: :mod:`sfdf.sw.sim.boardsim`) a break also
flushes the host's output, the one event a pty carries that stands for it.

Transports share LiteX's small interface (``read``, ``write``, ``send_break``, ``reset_input_buffer``,
``close``; :class:`sfdf.sw.device.boardlink.Transport`): :class:`SerialTransport` over pyserial (any
``serial_for_url`` URL), or a fake in tests.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from sfdf.boards.facts import read_board_facts

from .boardlink import HELLO_TIMEOUT_S, BoardLink, Transport
from .codec import Codec
from .results import DeviceError
from .session import Device

__all__ = ["BOARD_TIMEOUT_S", "SIMULATED_BOARD_TIMEOUT_S", "SerialTransport", "open_board"]

#: Default frame budget of a board, and of a simulated one (on a pseudo-terminal), in seconds of its
#: clock (module docstring).
BOARD_TIMEOUT_S, SIMULATED_BOARD_TIMEOUT_S = 2.0, 30.0
#: Longest wait for bytes in one read.
_POLL_S = 0.005


class SerialTransport:
    """A :class:`Transport` over pyserial: ``port`` is a device (``/dev/ttyUSB0``) or any URL
    ``serial.serial_for_url`` takes (``loop://``, ``rfc2217://host:port``)."""

    def __init__(self, port: str, baud: int):
        import serial

        try:
            # a device node is locked (flock) while open: one host per board, so a busy board fails to open
            self._serial = serial.serial_for_url(port, baudrate=baud, timeout=_POLL_S, write_timeout=10,
                                                 exclusive=True if "://" not in port else None)
        except (serial.SerialException, ValueError) as error:
            raise DeviceError(f"cannot open {port} at {baud} baud: {error}") from None
        self.port = port
        self.pseudo_terminal = _pseudo_terminal(port)

    def read(self, size: int) -> bytes:
        return self._serial.read(max(1, min(size, self._serial.in_waiting or 1)))

    def write(self, data: bytes) -> None:
        self._serial.write(data)

    def send_break(self, duration: float) -> None:
        self._serial.send_break(duration)
        if self.pseudo_terminal:  # the kernel drops a break on a pty: a simulated board takes this instead
            self._serial.reset_output_buffer()

    def reset_input_buffer(self) -> None:
        self._serial.reset_input_buffer()

    def close(self) -> None:
        self._serial.close()


def _pseudo_terminal(port: str) -> bool:
    """Whether ``port`` is a pseudo-terminal's device node (UNIX 98 pty slaves have majors 136-143), such
    as ``sfdf board-sim --pty`` serves (:mod:`sfdf.sw.sim.boardsim`: its break is the host's output flush)."""
    try:
        return 136 <= os.major(os.stat(port).st_rdev) <= 143
    except (OSError, ValueError):
        return False


def open_board(manifest: str | os.PathLike, port: str, *, timeout_cycles: int | None = None,
               transport: Transport | None = None, clock: Callable[[], float] = time.monotonic) -> Device:
    """A :class:`~sfdf.sw.device.session.Device` on the board behind ``port`` (``open_device(..., backend="serial:PORT")``).

    Parameters
    ----------
    manifest : path
        ``<name>.json`` as ``sfdf build -o DIR`` wrote it, with ``<name>.board.json`` beside it.
    port : str
        A serial device or pyserial URL; ignored when ``transport`` is given.
    timeout_cycles : int, optional
        Frame budget in board clock cycles (default :data:`BOARD_TIMEOUT_S` seconds' worth).
    transport : Transport, optional
        An open transport (tests: a fake board).

    Raises
    ------
    FileNotFoundError
        The manifest or its board file is missing.
    sfdf.sw.device.results.DeviceError
        The port does not open, or no board says hello.
    """
    path = Path(manifest)
    if path.suffix != ".json":
        raise ValueError(f"{path}: a board device opens the manifest sfdf build wrote (DIR/<name>.json), "
                         "not a spec")
    facts = json.loads(path.read_text())
    board = read_board_facts(path)
    codec = Codec(facts)
    transport = transport or SerialTransport(port, int(board["baud"]))
    simulated = getattr(transport, "pseudo_terminal", False)
    try:
        # a simulated board's process may wait for a loaded machine's CPU: its hello and frames get longer
        link = BoardLink(transport, codec, board, clock, SIMULATED_BOARD_TIMEOUT_S if simulated else HELLO_TIMEOUT_S)
    except BaseException:
        transport.close()
        raise
    seconds = SIMULATED_BOARD_TIMEOUT_S if simulated else BOARD_TIMEOUT_S
    budget = timeout_cycles if timeout_cycles is not None else int(seconds * float(board["clk_hz"]))
    return Device(codec, link, budget)
