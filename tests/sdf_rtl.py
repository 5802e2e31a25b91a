"""Running an SDF network's RTL (hdl/sdf_network.py) in Amaranth's simulator: the set-up the SDF tests share."""

from __future__ import annotations

from amaranth.sim import Simulator


def simulate(dut, bench) -> None:
    """Run the async testbench ``bench(ctx)`` on ``dut`` with a clock until it returns."""
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
