"""cocotb measurement of a generated network: cycles per data beat at every sink, control messages per
edge, and simulated cycles per second. Run by :func:`sfdf.cosim.rates.run_measurement` for bench/throughput.py
and tests/cosim/test_throughput_bound.py (the figures; the test compares them with the bound).

``SFDF_COSIM_CONFIG`` names the JSON of :func:`sfdf.cosim.network.run_network`-style configuration plus
``result_path``, where the figures are written.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from sfdf.cosim.network_tests import NetworkBench


@cocotb.test()
async def measure(dut) -> None:
    """Feed the stimulus, time every sink beat and count every control-channel push until EOS."""
    config = json.loads(Path(os.environ["SFDF_COSIM_CONFIG"]).read_text(encoding="utf-8"))
    bench = NetworkBench(dut, config)
    iw = config["manifest"]["index_width"]
    credit = config["manifest"]["mode"] == "credit"
    edges = list(config["manifest"]["edges"])
    beats = {node: [] for node in bench.sinks}
    pushes = dict.fromkeys(edges, 0)
    data_tokens = dict.fromkeys(edges, 0)
    first_last = {}  # edge -> [first, last] cycle of a data push
    cycle = 0
    await bench.start()
    bench.feed()
    wall = time.perf_counter()
    while len(bench.finished) < len(bench.sinks) and cycle < config["max_cycles"]:
        await RisingEdge(dut.clk)
        await ReadOnly()
        cycle += 1
        for node, sink in bench.sinks.items():
            bus = sink.bus
            if int(bus.tvalid.value) and int(bus.tready.value):
                kind = int(bus.tuser.value) >> iw
                if kind == bench.eos_kind:
                    bench.finished.add(node)
                elif kind == bench.data_kind:
                    beats[node].append(cycle)
        for name in edges:
            data_in, ctrl = bench.channels[name]
            if int(data_in.i_stream__valid.value) and int(data_in.i_stream__ready.value):
                data_tokens[name] += 1
                first_last.setdefault(name, [cycle, cycle])[1] = cycle
            if credit and int(ctrl.i_stream__valid.value) and int(ctrl.i_stream__ready.value):
                pushes[name] += 1
    wall = time.perf_counter() - wall
    result = {"cycles": cycle, "wall_s": wall, "cycles_per_s": cycle / wall if wall else None,
              "sink_beat_cycles": beats, "control_pushes": pushes, "data_tokens": data_tokens,
              "data_push_window": first_last}
    Path(config["result_path"]).write_text(json.dumps(result))
