"""The device API (docs/host.md): open a device, send frames, receive each frame's results, close.

    with open_device("out/variance.json") as device:
        device.send_frames(enumerate(frames))          # (frame id, pixels) pairs
        for result in device.results():
            print(result.frame_id, result.fields)      # {"n": ..., "sum": ..., "sum_sq": ...}

This is the module users import: :func:`open_device`, the :class:`Device` it returns, its
:class:`FrameResult` and errors (:class:`DeviceError`, :class:`FrameTimeout`, :class:`DeviceDied`,
:class:`ProtocolError`). How frames map to results, cycle budgets and failures:
:mod:`sfdf.sw.device.session`; the results and errors: :mod:`sfdf.sw.device.results`.

Backends. ``"sim"``: the network's Verilog compiled with the fast harness (:mod:`sfdf.sw.sim.fastsim`),
by default in a child Python process (:class:`sfdf.sw.device.process.ProcessLink`) so that a crash of the model
cannot take the caller down, else in this one (:class:`sfdf.sw.device.simlink.SimLink`); the parent and the
child speak the byte framing of :mod:`sfdf.sw.device.codec`, as a serial board link does. ``"serial:<port>"``:
a board built by ``sfdf build``, over a UART (:mod:`sfdf.sw.device.uart`). A :class:`Device` needs nothing of
its backend but the :class:`sfdf.sw.device.link.Link` protocol.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from sfdf.hdl.buildcache import FASTSIM_DIR
from sfdf.sw.sim.build import build
from sfdf.sw.sim.fastsim import FastSim

from .codec import Codec
from .process import ProcessLink
from .results import DeviceDied, DeviceError, FrameResult, FrameTimeout, ProtocolError
from .sdf import SDFDevice
from .session import DEFAULT_TIMEOUT_CYCLES, Device
from .simlink import RESET_CYCLES, SimLink
from .uart import open_board

__all__ = [
    "DEFAULT_TIMEOUT_CYCLES", "Device", "DeviceDied", "DeviceError", "FrameResult", "FrameTimeout", "ProtocolError",
    "SDFDevice", "harness_library", "open_device",
]


def harness_library(path: Path, build_dir: str | os.PathLike) -> tuple[Path, dict]:
    """The harness library and manifest of a manifest path, or of a spec generated into a scratch folder
    (the build copies what it needs, so processes opening the same spec at once never share files).

    Raises
    ------
    FileNotFoundError
        The manifest or its Verilog is missing.
    """
    if path.suffix == ".toml":
        # Here, not at the top: generating pulls in the analysis (scipy) and Amaranth, half a second that
        # opening a manifest (Spark executors, the benchmarks, boards) never needs.
        from sfdf.gen.spec import load_spec
        from sfdf.hdl.generate import generate

        with tempfile.TemporaryDirectory(prefix="sfdf-spec-") as scratch:
            return harness_library(generate(load_spec(path), scratch)[1], build_dir)
    facts = json.loads(path.read_text())
    verilog = path.with_name(f"{facts['name']}.v")
    if not verilog.is_file():
        raise FileNotFoundError(f"{verilog} (the Verilog beside {path}) does not exist; run sfdf generate")
    return build(verilog, facts, build_dir), facts


def _mode(path: Path) -> str | None:
    """The network's mode from its manifest or spec, without generating it."""
    if path.suffix == ".toml":
        from sfdf.gen.spec import load_spec

        return "sdf" if load_spec(path).is_sdf else None
    return json.loads(path.read_text()).get("mode") if path.is_file() else None


def open_device(manifest: str | os.PathLike, backend: str = "sim", *, build_dir: str | os.PathLike = FASTSIM_DIR,
                process: bool = True, timeout_cycles: int | None = None, backpressure: float = 0.0,
                idle: float = 0.0, seed: int = 1, transport=None) -> Device:
    """Open the network of ``manifest`` (``<name>.json`` beside ``<name>.v``, as ``sfdf generate`` writes them).

    Parameters
    ----------
    manifest : path
        The manifest; the Verilog is ``<name>.v`` in the same folder. A spec (``*.toml``) is generated
        first (:func:`sfdf.hdl.generate.generate`; an unsafe spec is refused).
    backend : {"sim", "serial:<port>"}
        ``"sim"``: the fast Verilator harness (built once per design under ``build_dir``).
        ``"serial:/dev/ttyUSB0"`` (any pyserial URL): a board ``sfdf build -o DIR`` made, ``manifest``
        being ``DIR/<name>.json`` (:mod:`sfdf.sw.device.uart`).
    process : bool
        Run the simulator in a child process (default) or in this one.
    timeout_cycles : int, optional
        Default cycle budget of a frame: :data:`DEFAULT_TIMEOUT_CYCLES` simulated cycles, or on a board
        two seconds of its clock, thirty on a simulated board (:mod:`sfdf.sw.device.uart`).
    backpressure, idle : float
        Probability per cycle that each sink holds ``tready`` low / each source idles (tests).
    seed : int
        Seeds the back-pressure and idle patterns.
    transport : sfdf.sw.device.boardlink.Transport, optional
        ``serial:`` only: an open transport instead of the port (tests use a fake board).

    Returns
    -------
    Device or SDFDevice
        A context manager; an SDF network's manifest (``mode = "sdf"``, 004) gives an
        :class:`~sfdf.sw.device.sdf.SDFDevice`, which takes firings instead of frames.

    Raises
    ------
    FileNotFoundError
        The manifest or its Verilog is missing.
    cosim.toolchain.ToolchainError, cosim.fastsim.FastSimError
        The harness cannot be built.
    """
    if backend.startswith("serial:"):
        if _mode(Path(manifest)) == "sdf":
            raise DeviceError(f"{manifest}: an SDF network (004) runs on the simulated device only; sfdf build does "
                              "not take SDF networks yet")
        if backpressure or idle:
            raise ValueError("backpressure and idle are simulator knobs; a board has none")
        return open_board(manifest, backend.removeprefix("serial:"), timeout_cycles=timeout_cycles,
                          transport=transport)
    if backend != "sim":
        raise ValueError(f"backend {backend!r}: only 'sim' and 'serial:<port>' (such as serial:/dev/ttyUSB0) exist")
    timeout_cycles = DEFAULT_TIMEOUT_CYCLES if timeout_cycles is None else timeout_cycles

    library, facts = harness_library(Path(manifest), build_dir)
    codec = Codec(facts)
    link = ProcessLink(library, facts) if process else SimLink(FastSim(library, facts, RESET_CYCLES), codec)
    device = SDFDevice(codec, link, facts, timeout_cycles) if facts.get("mode") == "sdf" else \
        Device(codec, link, timeout_cycles)
    try:
        for n, port in enumerate(codec.sinks):
            if backpressure:
                link.set_pause(port.node, backpressure, seed * 7919 + n, sink=True)
        for n, port in enumerate(codec.sources):
            if idle:
                link.set_pause(port.node, idle, seed * 104729 + n, sink=False)
    except BaseException:
        device.close()
        raise
    return device
