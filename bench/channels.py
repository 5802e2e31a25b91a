"""Channels alone on ECP5-85F: sfdf's exact-capacity ``DataChannel`` beside Amaranth's ``SyncFIFOBuffered``.

Four channels of ``width`` bits in series (the first's ``i_stream`` and the last's ``o_stream`` are the
top's ports), Yosys ``synth_ecp5`` and nextpnr-ecp5 ``--out-of-context`` with the clock constrained at
400 MHz so the reported Fmax is the design's; the median of three placement seeds (nextpnr moves 5-10%
with the seed). ``SyncFIFOBuffered(depth=c)`` bounds its count by ``c`` but is not exact (see
:class:`sfdf.hdl.channels.DataChannel`); it is the speed a channel has to match.

Prints a table; with the defaults writes docs/channels.json and its table in docs/results.md
(bench/results.py).

    .venv/bin/python bench/channels.py [--capacities 4 16 64] [--kinds data syncfifo] [--seeds 1 2 3] [--tables]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from sfdf.boards.build import out_of_context
from sfdf.hdl.channels import DataChannel

from results import publish, table, tables_flag, tables_only

ROOT = Path(__file__).resolve().parents[1]
SERIES = 4
CAPACITIES, KINDS, WIDTH, SEEDS = [2, 4, 16, 64], ["data", "syncfifo"], 32, [1, 2, 3]
KIND_NAMES = {"data": "`DataChannel`", "syncfifo": "`SyncFIFOBuffered`"}


class _FifoChannel(wiring.Component):
    """``SyncFIFOBuffered`` behind the same stream members as a channel."""

    def __init__(self, width, depth):
        self.width, self.depth = width, depth
        super().__init__({"i_stream": In(stream.Signature(width)), "o_stream": Out(stream.Signature(width))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = SyncFIFOBuffered(width=self.width, depth=self.depth)
        m.d.comb += [
            fifo.w_data.eq(self.i_stream.payload), fifo.w_en.eq(self.i_stream.valid),
            self.i_stream.ready.eq(fifo.w_rdy),
            self.o_stream.payload.eq(fifo.r_data), self.o_stream.valid.eq(fifo.r_rdy),
            fifo.r_en.eq(self.o_stream.ready),
        ]
        return m


class Series(wiring.Component):
    """``SERIES`` channels of one kind in a line."""

    def __init__(self, kind, width, capacity):
        self.kind, self.width, self.capacity = kind, width, capacity
        super().__init__({"i_stream": In(stream.Signature(width)), "o_stream": Out(stream.Signature(width))})

    def elaborate(self, platform):
        m = Module()
        make = {"data": lambda: DataChannel(self.width, self.capacity),
                "syncfifo": lambda: _FifoChannel(self.width, self.capacity)}[self.kind]
        chans = [make() for _ in range(SERIES)]
        for k, chan in enumerate(chans):
            m.submodules[f"c{k}"] = chan
        wiring.connect(m, wiring.flipped(self.i_stream), chans[0].i_stream)
        for a, b in itertools.pairwise(chans):
            wiring.connect(m, a.o_stream, b.i_stream)
        wiring.connect(m, chans[-1].o_stream, wiring.flipped(self.o_stream))
        return m


def place(kind: str, width: int, capacity: int, seeds: list[int]) -> dict:
    """Fmax (median over ``seeds``) and utilisation of one series."""
    return {"kind": kind, "width": width, "capacity": capacity, "series": SERIES,
            **out_of_context(Series(kind, width, capacity), seeds)}


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's channel table (bench/results.py)."""
    rows = [[KIND_NAMES.get(r["kind"], r["kind"]), r["capacity"],
             f"{r['fmax_median_mhz']} ({' / '.join(map(str, r['fmax_mhz']))})", f"{r['luts']:,}", f"{r['ffs']:,}",
             r["lutram"], r["brams"]] for r in data["rows"]]
    return {"channels table": f"{data['series']} channels of {data['width']} bits in series, out of context on ECP5-85F, "
                              "median of the seeds (then each seed):\n\n" + table(
                                  ["channel", "capacity", "Fmax MHz (seeds)", "LUT4", "FF", "LUT RAM", "BRAM"], rows,
                                  "lrrrrrr")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacities", type=int, nargs="+", default=CAPACITIES)
    parser.add_argument("--kinds", nargs="+", default=KINDS)
    parser.add_argument("--width", type=int, default=WIDTH)
    parser.add_argument("--seeds", type=int, nargs="+", default=SEEDS)
    tables_flag(parser)
    args = parser.parse_args(argv)
    if tables_only(args, "channels", sections):
        return
    rows = []
    for capacity in args.capacities:
        for kind in args.kinds:
            start = time.monotonic()
            row = place(kind, args.width, capacity, args.seeds)
            row["wall_s"] = round(time.monotonic() - start, 1)
            rows.append(row)
            print(f"{kind} x{SERIES}, capacity {capacity}: {row['fmax_median_mhz']} MHz "
                  f"({', '.join(map(str, row['fmax_mhz']))}), {row['luts']} LUT4", flush=True)
    data = {"width": args.width, "series": SERIES, "seeds": args.seeds, "rows": rows}
    print(sections(data)["channels table"])
    if (args.capacities, args.kinds, args.width, args.seeds) == (CAPACITIES, KINDS, WIDTH, SEEDS):
        publish("channels", data, sections)


if __name__ == "__main__":
    main()
