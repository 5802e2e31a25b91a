"""What one hop of a chain costs on ECP5-85F, out of context: the pipelined node, the single-stage node, and
the floor a one-cycle hop could reach.

A residual block streams at full rate from a skip capacity of about its branch's cycles, so a hop's cycles
trade against its clock (docs/hardware.md, "The single-stage node"). Rows, each a chain of ``HOPS`` interior
nodes between channels of capacity 32 (16-bit data, 10-bit indices inside, interval 31, as bench/fpga.py's
chain), ``random_filter`` at rate 0 and 0.3:

* ``plain``: the hop with no control (the channel's head to the kernel to the next channel): the fabric's
  ceiling;
* ``floor``: the least control a one-cycle hop of 000's live credit can have (:class:`FloorNode`): the
  data head or else the heartbeat register, EOS as a flag on the last token, 000 Alg. 4's interval test
  for both candidates from registers, the filter's decisions from registers, no user messages, no stamps;
* ``pipelined``, ``single``: sfdf's own network (:class:`sfdf.hdl.top.NetworkTop`: a source, the interior
  nodes, a sink) with its interior nodes pipelined (three cycles per hop) or single-stage (one).

Yosys ``synth_ecp5`` and nextpnr-ecp5 ``--out-of-context`` at 400 MHz, the median of three placement seeds
(bench/channels.py's flow). ``--check`` simulates the floor chain against the filter model first.
Prints a table; with the default rates and seeds writes docs/hop.json and its table in docs/results.md
(bench/results.py).

    .venv/bin/python bench/hop.py [--rates 0 0.3] [--seeds 1 2 3] [--check] [--tables]
"""

from __future__ import annotations

import argparse
import itertools
import random
from dataclasses import replace
from pathlib import Path

from amaranth import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from sfdf.boards.build import out_of_context
from sfdf.gen.analysis import check
from sfdf.gen.contract import KernelPorts
from sfdf.gen.kernels import LFSR_MASK
from sfdf.gen.randomnet import network_from_pairs
from sfdf.hdl.channels import DataChannel
from sfdf.hdl.kernels import RandomFilter
from sfdf.hdl.top import NetworkTop

from results import publish, table, tables_flag, tables_only

ROOT = Path(__file__).resolve().parents[1]
RATES, SEEDS = [0.0, 0.3], [1, 2, 3]
HOPS, CAPACITY, DATA, INDEX, INTERVAL = 3, 32, 16, 10, 31


def token_layout(plain: bool) -> data.StructLayout:
    return data.StructLayout({"data": DATA} if plain else {"index": INDEX, "data": DATA, "eos": 1})


HEARTBEAT = data.StructLayout({"valid": 1, "index": INDEX})


class FloorNode(wiring.Component):
    """One hop of the floor (module docstring), or with ``plain`` of no control at all."""

    def __init__(self, rate: float, seed: int, plain: bool):
        self.rate, self.seed, self.plain = rate, seed, plain
        tokens = stream.Signature(token_layout(plain))
        super().__init__({"i_data": In(tokens), "i_hb": In(HEARTBEAT), "o_hb_clear": Out(1),
                          "o_data": Out(tokens), "o_hb": Out(HEARTBEAT), "i_hb_clear": In(1)})

    def elaborate(self, platform):
        m = Module()
        # the floor takes its filter decisions from registers, as the single-stage node does
        k = m.submodules.kernel = _filter(self.rate, self.seed, ahead=not self.plain)
        (beat,), (out,) = k.inputs, k.outputs
        head = self.i_data
        tok = head.valid
        m.d.comb += [beat.payload.data.eq(head.payload.data), self.o_data.payload.data.eq(out.payload.data)]
        if self.plain:
            fire = tok & (~k.emit_early[0] | self.o_data.ready)
            m.d.comb += [beat.payload.present.eq(1), beat.valid.eq(fire), head.ready.eq(fire),
                         self.o_data.valid.eq(tok & k.emit_early[0])]
            return m
        dummy = ~tok & self.i_hb.valid  # the heartbeat, once the data channel is empty
        index = Mux(tok, head.payload.index, self.i_hb.index)
        eos = tok & head.payload.eos
        emit = tok & (k.emit_early[0] | eos)
        fire = (tok | dummy) & (~emit | self.o_data.ready)
        last = Signal(INDEX)  # LastRecvIdx
        late = Mux(tok, (head.payload.index - last)[:INDEX] > INTERVAL, (self.i_hb.index - last)[:INDEX] > INTERVAL)
        due = fire & ~emit & late
        m.d.comb += [beat.payload.present.eq(tok & ~eos), beat.valid.eq(fire & tok & ~eos), head.ready.eq(fire & tok),
                     self.o_hb_clear.eq(fire & dummy), self.o_data.valid.eq(fire & emit),
                     self.o_data.payload.index.eq(index), self.o_data.payload.eos.eq(eos)]
        with m.If(fire & emit | due):
            m.d.sync += last.eq(index)
        with m.If(fire & emit):  # a later token clears the dummy; a newer dummy overwrites it
            m.d.sync += self.o_hb.valid.eq(0)
        with m.Elif(due):
            m.d.sync += [self.o_hb.valid.eq(1), self.o_hb.index.eq(index)]
        with m.Elif(self.i_hb_clear):
            m.d.sync += self.o_hb.valid.eq(0)
        return m


class FloorChain(wiring.Component):
    """Words (indexed by a counter) -> channel -> ``hops`` :class:`FloorNode` s, each followed by a channel."""

    def __init__(self, hops: int, rate: float, plain: bool, capacity: int = CAPACITY):
        self.hops, self.rate, self.plain, self.capacity = hops, rate, plain, capacity
        super().__init__({"i_stream": In(stream.Signature(data.StructLayout({"data": DATA, "eos": 1}))),
                          "o_stream": Out(stream.Signature(token_layout(plain))), "o_hb": Out(HEARTBEAT)})

    def elaborate(self, platform):
        m = Module()
        chans = [DataChannel(token_layout(self.plain), self.capacity) for _ in range(self.hops + 1)]
        for j, chan in enumerate(chans):
            m.submodules[f"c{j}"] = chan
        count = Signal(INDEX)
        first = chans[0].i_stream
        m.d.comb += [first.valid.eq(self.i_stream.valid), self.i_stream.ready.eq(first.ready),
                     first.payload.data.eq(self.i_stream.payload.data)]
        if not self.plain:
            m.d.comb += [first.payload.index.eq(count), first.payload.eos.eq(self.i_stream.payload.eos)]
        with m.If(self.i_stream.valid & self.i_stream.ready):
            m.d.sync += count.eq(count + 1)
        prev = None  # the first hop's input has no heartbeat
        for j in range(self.hops):
            node = m.submodules[f"n{j + 1}"] = FloorNode(self.rate, seed=j + 1, plain=self.plain)
            wiring.connect(m, chans[j].o_stream, node.i_data)
            wiring.connect(m, node.o_data, chans[j + 1].i_stream)
            if prev is not None:
                m.d.comb += [node.i_hb.eq(prev.o_hb), prev.i_hb_clear.eq(node.o_hb_clear)]
            prev = node
        wiring.connect(m, chans[-1].o_stream, wiring.flipped(self.o_stream))
        # the sink takes the heartbeat once its channel is empty
        m.d.comb += [self.o_hb.eq(prev.o_hb), prev.i_hb_clear.eq(prev.o_hb.valid & ~chans[-1].o_stream.valid)]
        return m


def _filter(rate: float, seed: int, ahead: bool = False) -> RandomFilter:
    """A hop's ``random_filter``: one input and one output of :data:`DATA` bits."""
    ports = KernelPorts(inputs=(("i", DATA),), outputs=(("o", DATA),), edges_in=("in",), edges_out=("out",),
                        index_width=INDEX, data_width=DATA)
    return RandomFilter(ports=ports, features={}, rate=rate, seed=seed, ahead=ahead)


def passed_filters(tokens, hops: int, rate: float) -> list:
    """``tokens`` that every hop's ``random_filter`` lets through (hop ``j`` seeded ``j + 1``, its LFSR stepped
    once per data token, as :class:`sfdf.hdl.kernels.RandomFilter` steps it)."""
    for j in range(hops):
        kernel = _filter(rate, j + 1)
        kernel._MustUse__silence = True  # asked for its seed and threshold, never elaborated
        state, kept = kernel.seeds[0], []
        for token in tokens:
            state = (state >> 1) ^ (LFSR_MASK if state & 1 else 0)
            if kernel.threshold == 0 or (kernel.threshold < 1 << 16 and state >> 16 >= kernel.threshold):
                kept.append(token)
        tokens = kept
    return tokens


def check_floor(chain: FloorChain, words: int = 300, ready: float = 0.7, seed: int = 1) -> dict:
    """Simulate ``chain`` (not plain) on ``words`` random words, the last with EOS, its output ready with
    probability ``ready``: every token the filters let through, in order and unchanged, EOS last (with no
    data), each dummy the sink sees above the items before it, and the cycles from a word's push to its
    output without filtering. Raises AssertionError otherwise."""
    from amaranth.sim import Simulator

    rng = random.Random(seed)
    values = [rng.randrange(1 << DATA) for _ in range(words)]
    got, seen = [], []
    sim = Simulator(chain)
    sim.add_clock(1e-8)

    async def bench(ctx):
        sent, cycle, pushed = 0, 0, {}
        while cycle < 40 * words:
            ctx.set(chain.i_stream.valid, sent < words)
            if sent < words:
                ctx.set(chain.i_stream.payload.data, values[sent])
                ctx.set(chain.i_stream.payload.eos, sent == words - 1)
            taken = rng.random() < ready
            ctx.set(chain.o_stream.ready, taken)
            await ctx.delay(1e-9)
            out = chain.o_stream
            if ctx.get(chain.o_hb.valid) and not ctx.get(out.valid):
                seen.append(ctx.get(chain.o_hb.index))
            if ctx.get(out.valid) and taken:
                payload = ctx.get(out.payload)
                got.append((payload.index, payload.data, cycle - pushed[payload.index]))
                seen.append(payload.index)
                if payload.eos:
                    return
            if sent < words and ctx.get(chain.i_stream.ready):
                pushed[sent % (1 << INDEX)] = cycle
                sent += 1
            await ctx.tick()
            cycle += 1

    sim.add_testbench(bench)
    sim.run()
    expected = passed_filters(list(enumerate(values[:-1])), chain.hops, chain.rate) + [(words - 1, 0)]
    assert [(i, d) for i, d, _ in got] == expected, "the floor chain's tokens differ from the filters'"
    assert seen == sorted(seen), "an item below one seen before it"
    return {"hops": chain.hops, "rate": chain.rate, "tokens": len(got), "dummies_seen": len(seen) - len(got),
            "first_latency_cycles": got[0][2]}


def sfdf_chain(rate: float, single: bool):
    """bench/fpga.py's chain (a source, ``HOPS`` interior nodes, a sink) at filter ``rate``, its interior nodes
    single-stage or pipelined, resolved."""
    names = [f"n{i}" for i in range(HOPS + 2)]
    net = network_from_pairs(names, itertools.pairwise(names), [CAPACITY] * (HOPS + 1), name="hop", mode="credit")
    inner = set(names[1:-1])
    nodes = tuple(replace(n, params={"rate": rate, "seed": k + 1}, pipelined=not (single and n.name in inner))
                  for k, n in enumerate(net.nodes))
    return check(replace(net, data_width=DATA, nodes=nodes)).network


def designs(rate: float):
    """name -> (cycles per hop, the top to place)."""
    return {"plain": (1, FloorChain(HOPS, rate, plain=True)), "floor": (1, FloorChain(HOPS, rate, plain=False)),
            "pipelined": (3, NetworkTop(sfdf_chain(rate, single=False))),
            "single": (1, NetworkTop(sfdf_chain(rate, single=True)))}


HOP_NAMES = {"plain": "plain", "floor": "floor", "pipelined": "pipelined (sfdf)", "single": "single-stage (sfdf)"}


def sections(data: dict) -> dict[str, str]:
    """docs/results.md's hop table (bench/results.py): a row per hop, an Fmax and LUT4 column per rate."""
    rates = sorted({r["rate"] for r in data["rows"]})
    by = {(r["hop"], r["rate"]): r for r in data["rows"]}
    header = ["hop", "cycles per hop"]
    for rate in rates:
        header += [f"Fmax MHz, filter rate {rate:g} (seeds)", "LUT4"]
    rows = []
    for hop in dict.fromkeys(r["hop"] for r in data["rows"]):
        row = [HOP_NAMES.get(hop, hop), by[hop, rates[0]]["cycles_per_hop"]]
        for rate in rates:
            r = by[hop, rate]
            row += [f"{r['fmax_median_mhz']} ({' / '.join(map(str, r['fmax_mhz']))})", f"{r['luts']:,}"]
        rows.append(row)
    seeds = "-".join(map(str, (data["seeds"][0], data["seeds"][-1])))
    return {"hop table": (f"A chain of {data['hops']} interior nodes between channels of capacity {data['capacity']}, "
                          f"{DATA}-bit data, {INDEX}-bit indices; Yosys and nextpnr `--out-of-context` on ECP5-85F, "
                          f"seeds {seeds} (median, then each seed):\n\n" + table(header, rows, "lr" + "rr" * len(rates)))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=float, nargs="+", default=RATES)
    parser.add_argument("--seeds", type=int, nargs="+", default=SEEDS)
    parser.add_argument("--check", action="store_true", help="simulate the floor chain against the model first")
    tables_flag(parser)
    args = parser.parse_args(argv)
    if tables_only(args, "hop", sections):
        return
    if args.check:
        for rate in args.rates:
            print(check_floor(FloorChain(8, rate, plain=False, capacity=16)), flush=True)
    rows = []
    for rate in args.rates:
        for name, (cycles, top) in designs(rate).items():
            row = {"hop": name, "rate": rate, "cycles_per_hop": cycles, **out_of_context(top, args.seeds)}
            rows.append(row)
            print(f"{name} at rate {rate}: {row['fmax_median_mhz']} MHz ({' / '.join(map(str, row['fmax_mhz']))}), "
                  f"{row['luts']} LUT4, {row['ffs']} FF", flush=True)
    data = {"hops": HOPS, "capacity": CAPACITY, "seeds": args.seeds, "rows": rows}
    print(sections(data)["hop table"])
    if (args.rates, args.seeds) == (RATES, SEEDS):
        publish("hop", data, sections)


if __name__ == "__main__":
    main()
