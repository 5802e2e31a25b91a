# amaranth: UnusedElaboratable=no
"""The plain baseline (boards/baseline.py) computes what the network computes when nothing filters:
the variance network with ``filter_zeros = 0``, its pipelined kernels behind their decided queues,
under random source pauses and sink stalls (Amaranth simulator)."""

import random
from dataclasses import replace

from amaranth.sim import Simulator

from sfdf.boards.baseline import PlainNetworkTop
from sfdf.gen.analysis import resolve
from sfdf.gen.kernels import variance_fields
from sfdf.gen.spec import load_spec


def test_plain_variance_sums_every_frame(examples):
    network = load_spec(examples / "variance.toml")
    network = resolve(replace(network, nodes=tuple(replace(n, params={"filter_zeros": 0}) if n.name == "u" else n
                                                   for n in network.nodes)))
    dut = PlainNetworkTop(network)
    rng = random.Random(5)
    frames = [[rng.choice([0, rng.randrange(1 << 16)]) for _ in range(rng.randint(1, 9))] for _ in range(8)]
    frames.append([65535] * 7)
    fields = variance_fields(network.index_width)
    results = []

    async def source(ctx):
        words = [(p, k == len(f) - 1) for f in frames for k, p in enumerate(f)]
        while words:
            valid = rng.random() < 0.7
            ctx.set(dut.u.tvalid, valid)
            ctx.set(dut.u.tdata, words[0][0])
            ctx.set(dut.u.tlast, words[0][1])
            _, _, ready = await ctx.tick().sample(dut.u.tready)
            if valid and ready:
                words.pop(0)
        ctx.set(dut.u.tvalid, 0)

    async def sink(ctx):
        while len(results) < len(frames):
            ready = rng.random() < 0.6
            ctx.set(dut.x.tready, ready)
            _, _, valid, tdata = await ctx.tick().sample(dut.x.tvalid, dut.x.tdata)
            if valid and ready:
                results.append(tdata)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(source)
    sim.add_testbench(sink)
    sim.run()

    def field(value, name):
        lsb, width = fields[name]
        return value >> lsb & ((1 << width) - 1)

    assert [(field(r, "sum"), field(r, "sum_sq")) for r in results] == \
        [(sum(f), sum(p * p for p in f)) for f in frames]
