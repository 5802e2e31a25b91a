"""``sfdf-discover-fpga``: Spark's resource discovery script for boards (``resource:fpga``, :mod:`sfdf.sw.spark.boards`).

A Spark worker runs it at start (``spark.worker.resource.fpga.discoveryScript``) and advertises what it
prints, ``{"name": "fpga", "addresses": [PORT, ...]}``, one address per attached board: its serial port.

* ``SFDF_FPGA_PORTS`` (comma-separated ports), when set in the worker's environment, is the list: boards
  on ports no USB query finds, and simulated boards (``sfdf board-sim DIR --pty``'s pseudo-terminals);
* else every USB serial port of the boards' FTDI chips, found by pyserial: the ULX3S's FT231X
  (0403:6015) and the UART of the iCEBreaker's FT2232H (0403:6010, its second interface; the first is
  the flash programmer).

Ports that do not exist are left out (a board unplugged since), so Spark never assigns a dead address.
"""

from __future__ import annotations

import json
import os
import sys

from .boards import RESOURCE

__all__ = ["FTDI_BOARDS", "board_ports", "main"]

#: (vendor, product) -> the interface number of the UART, of the boards sfdf builds for.
FTDI_BOARDS = {(0x0403, 0x6015): 0, (0x0403, 0x6010): 1}


def _usb_ports() -> list[str]:
    from serial.tools import list_ports

    found = []
    for port in list_ports.comports():
        interface = FTDI_BOARDS.get((port.vid, port.pid))
        if interface is None:
            continue
        location = port.location or ""
        if ":" in location and not location.endswith(f".{interface}"):
            continue
        found.append(port.device)
    return sorted(found)


def board_ports(environ=os.environ) -> list[str]:
    """The ports of the attached boards (module docstring)."""
    listed = environ.get("SFDF_FPGA_PORTS")
    ports = [p.strip() for p in listed.split(",") if p.strip()] if listed is not None else _usb_ports()
    return [p for p in ports if os.path.exists(p)]


def main() -> int:
    print(json.dumps({"name": RESOURCE, "addresses": board_ports()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
