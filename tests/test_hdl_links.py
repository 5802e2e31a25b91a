# amaranth: UnusedElaboratable=no
"""Per-edge link signatures and edge components (hdl/links.py): members, flips, pass-through, latency."""

import re
import subprocess
import types
from dataclasses import replace

import pytest
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from sfdf.gen.analysis import resolve
from sfdf.gen.analysis.control import index_bits_inside
from sfdf.gen.spec import load_spec
from sfdf.hdl.inband import flushed_width
from sfdf.hdl.links import (
    CreditEdge,
    CreditLinkSignature,
    InbandEdge,
    InbandLinkSignature,
    Links,
    LinksSignature,
    edge_link,
)
from sfdf.hdl.node import SFDFNode
from sfdf.hdl.offer import release_layout
from sfdf.hdl.plan import plan
from sfdf.hdl.tokens import (
    control_layout,
    counter_control_layout,
    counter_data_layout,
    counter_heartbeat_layout,
    data_layout,
    heartbeat_layout,
    inband_token_layout,
)

IW, DW, PW = 8, 12, 16


def credit_link(capacity=4, control_capacity=9, live=True):
    return CreditLinkSignature(capacity=capacity, control_capacity=control_capacity, index_width=IW, data_width=DW,
                               payload_width=PW, live=live)


def inband_link(capacity=4, flush=False, buffered=True):
    return InbandLinkSignature(capacity=capacity, index_width=IW, data_width=DW, payload_width=PW,
                               buffered=buffered, flush=flush)


@pytest.mark.parametrize("live", [True, False])
def test_credit_link_is_000_fig2_seen_from_the_sender(live):
    members = credit_link(live=live).members
    if live:  # stamped messages (hdl.counter); a token says whether a message was sent with it
        assert members["data"] == Out(stream.Signature(counter_data_layout(IW, DW)))
        assert members["ctrl"] == Out(stream.Signature(counter_control_layout(4, IW, PW)))
        assert members["heartbeat"] == Out(counter_heartbeat_layout(IW))
    else:  # 000's credit messages (hdl.credit)
        assert members["data"] == Out(stream.Signature(data_layout(IW, DW)))
        assert members["ctrl"] == Out(stream.Signature(control_layout(4, IW, PW)))
        assert members["heartbeat"] == Out(heartbeat_layout(IW, 9))
    assert members["heartbeat_clear"] == In(1)
    assert members["release"] == In(release_layout())
    assert list(members) == ["data", "ctrl", "heartbeat", "heartbeat_clear", "release"]
    assert credit_link(live=live) == credit_link(live=live) != credit_link(capacity=8, live=live)
    assert credit_link(live=live) != credit_link(live=not live)


def test_heartbeat_in_head_link_carries_the_channels_copy_of_the_head_index():
    """An input of a join that orders its next heads a cycle ahead: the link carries ``join_index``, the
    data channel's copy of its head's index (a register of its own, for the join's comparators); the
    tokens are the plain live-credit tokens."""
    link = CreditLinkSignature(capacity=4, control_capacity=9, index_width=IW, data_width=DW, payload_width=PW,
                               heartbeat_in_head=True)
    assert link.members["data"].signature.members["payload"].shape == counter_data_layout(IW, DW)
    assert link.members["join_index"] == Out(IW)
    assert "join_index" not in credit_link().members and link != credit_link()


def test_channel_copy_of_a_head_field_stays_a_register_of_its_own(tmp_path):
    """Yosys merges registers with the same inputs; the copy's reset keeps it apart: synthesized for ECP5,
    the channel with ``copy="index"`` has exactly ``IW`` flip-flops more than without."""
    from amaranth.back import rtlil

    from sfdf.boards.build import toolchain_env
    from sfdf.hdl.channels import DataChannel

    def flip_flops(copy):
        channel = DataChannel(counter_data_layout(IW, DW), 4, copy=copy)
        path = tmp_path / f"channel-{copy}.il"
        path.write_text(rtlil.convert(channel, name="top"))
        log = path.with_suffix(".log")  # YoWASP's Yosys sees the folder it runs in, by relative paths
        done = subprocess.run([toolchain_env()["YOSYS"], "-q", "-l", log.name, "-p",
                               f"read_rtlil {path.name}; synth_ecp5 -top top; stat"], cwd=tmp_path,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        return int(re.search(r"^\s+(\d+)\s+TRELLIS_FF\s*$", log.read_text(), re.MULTILINE).group(1))

    assert flip_flops("index") == flip_flops(None) + IW
    with pytest.raises(ValueError, match="capacity of 2 or more"):
        DataChannel(counter_data_layout(IW, DW), 1, copy="index")


def test_inband_link_has_flush_only_when_asked():
    members = inband_link(capacity=6).members
    assert members["token"] == Out(stream.Signature(inband_token_layout(IW, DW, PW)))
    assert members["flushed"] == Out(flushed_width(6))
    assert "flushed" not in inband_link(capacity=6, buffered=False).members  # no output buffer: no count
    assert "flush" not in members
    assert inband_link(flush=True).members["flush"] == In(1)
    assert inband_link() != inband_link(flush=True)


@pytest.mark.parametrize("output_buffer, flush, expected", [(0, True, False), (1, True, False), (2, True, True),
                                                            (2, False, False)])
def test_edge_link_flush_needs_an_output_buffer_above_one(output_buffer, flush, expected):
    edge = types.SimpleNamespace(capacity=4, control_capacity=9, width=DW, output_buffer=output_buffer)
    link = edge_link(edge, mode="inband", index_width=IW, payload_width=PW, flush=flush)
    assert link == inband_link(flush=expected, buffered=output_buffer > 1)
    assert edge_link(edge, mode="credit", index_width=IW, payload_width=PW, flush=flush) == credit_link()
    assert edge_link(edge, mode="credit", index_width=IW, payload_width=PW, live_credit=False) == credit_link(live=False)


class Holder(wiring.Component):
    def __init__(self, ins, outs):
        super().__init__({"inputs": In(LinksSignature(ins)), "outputs": Out(LinksSignature(outs))})


def test_links_are_a_sequence_in_both_directions():
    a, b = credit_link(), inband_link(capacity=3)
    holder = Holder([a, b], [b])
    assert isinstance(holder.inputs, Links) and isinstance(holder.outputs, Links)
    assert len(holder.inputs) == 2 and len(holder.outputs) == 1
    assert holder.inputs[0].signature == a.flip() and holder.inputs[1].signature == b.flip()
    assert holder.outputs[0].signature == b
    assert list(holder.inputs) == [holder.inputs.e0, holder.inputs.e1]
    assert holder.inputs[0].data.valid.name == "inputs__e0__data__valid"
    assert LinksSignature([a, b]).flip().flip() == LinksSignature([a, b])
    assert len(Holder([], []).inputs) == 0


def test_links_refuse_ports_and_arrays():
    with pytest.raises(TypeError, match="Link 0 must be a signature"):
        LinksSignature([Out(1)])
    with pytest.raises(TypeError, match="Link 0 must be a signature"):
        LinksSignature([Out(credit_link()).array(2)])


def test_edge_components_check_their_link():
    with pytest.raises(TypeError, match="CreditLinkSignature"):
        CreditEdge(inband_link())
    with pytest.raises(TypeError, match="InbandLinkSignature"):
        InbandEdge(credit_link())


def test_inband_edge_flush_is_on_the_senders_half_only():
    edge = InbandEdge(inband_link(flush=True))
    assert "flush" in edge.i_link.signature.members and "flush" not in edge.o_link.signature.members
    assert "flush" not in InbandEdge(inband_link()).signature.members


def run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def test_credit_edge_channels_and_heartbeat():
    """Tokens and messages arrive a cycle after they are written (the channels' latency); the heartbeat
    register and its clear pass straight through."""
    dut = CreditEdge(credit_link(capacity=2, control_capacity=3))

    async def bench(ctx):
        i, o = dut.i_link, dut.o_link
        ctx.set(i.heartbeat, {"valid": 1, "index": 7})
        ctx.set(o.heartbeat_clear, 1)
        assert ctx.get(o.heartbeat.index) == 7 and ctx.get(o.heartbeat.valid) and ctx.get(i.heartbeat_clear)
        ctx.set(i.data.payload, {"index": 3, "data": 0x5a})
        ctx.set(i.ctrl.payload, {"eos": 0, "stamp": 2, "index": 3, "with_token": 1, "payload": 9})
        ctx.set(i.data.valid, 1)
        ctx.set(i.ctrl.valid, 1)
        assert ctx.get(i.data.ready) and ctx.get(i.ctrl.ready) and not ctx.get(o.data.valid)
        await ctx.tick()
        ctx.set(i.data.valid, 0)
        ctx.set(i.ctrl.valid, 0)
        assert ctx.get(o.data.valid) and ctx.get(o.data.payload.data) == 0x5a
        assert ctx.get(o.ctrl.valid) and ctx.get(o.ctrl.payload.stamp) == 2 and ctx.get(o.ctrl.payload.payload) == 9

    run(dut, bench)


def test_credit_edge_counts_what_the_receiver_holds():
    """A token the receiver has read still takes room in q until its offer register releases it."""
    dut = CreditEdge(credit_link(capacity=2, control_capacity=3))

    async def bench(ctx):
        i, o = dut.i_link, dut.o_link
        ctx.set(i.data.valid, 1)
        for index in (1, 2):
            ctx.set(i.data.payload, {"index": index, "data": index})
            await ctx.tick()
        ctx.set(i.data.valid, 0)
        assert not ctx.get(i.data.ready)
        ctx.set(o.data.ready, 1)  # the receiver reads token 1 into its offer register
        await ctx.tick()
        ctx.set(o.data.ready, 0)
        assert ctx.get(o.data.payload.index) == 2
        assert not ctx.get(i.data.ready), "a held token still counts"
        ctx.set(o.release, {"data": 1, "ctrl": 0})
        await ctx.tick()
        ctx.set(o.release, {"data": 0, "ctrl": 0})
        assert ctx.get(i.data.ready), "room once released"

    run(dut, bench)


def test_inband_edge_channel_count_and_flush():
    dut = InbandEdge(inband_link(capacity=3, flush=True))

    async def bench(ctx):
        i, o = dut.i_link, dut.o_link
        ctx.set(i.flushed, 2)
        ctx.set(dut.flush, 1)
        assert ctx.get(o.flushed) == 2 and ctx.get(i.flush)
        ctx.set(i.token.payload, {"index": 4, "is_data": 1, "data": 0x33})
        ctx.set(i.token.valid, 1)
        await ctx.tick()
        ctx.set(i.token.valid, 0)
        assert ctx.get(o.token.valid) and ctx.get(o.token.payload.index) == 4 and ctx.get(o.token.payload.data) == 0x33

    run(dut, bench)


@pytest.mark.parametrize("mode", ["credit", "inband"])
def test_node_links_are_the_edges_links(examples, mode):
    net = load_spec(examples / "diamond.toml")
    net = resolve(replace(net, mode=mode).with_edges(replace(e, interval="auto") for e in net.edges))
    nodes = plan(net).nodes
    sink, source = SFDFNode(nodes["x"]), SFDFNode(nodes["u"])
    assert len(sink.inputs) == 2 and len(sink.outputs) == 0 and len(source.inputs) == 0
    iw = index_bits_inside(net, {e.name: e.interval for e in net.edges})
    for k, e in enumerate(net.in_edges("x")):
        heads = nodes["x"].inputs[k].heartbeat_in_head  # the plan's choice (sfdf.hdl.plan.heartbeat_in_head_edges)
        link = edge_link(e, mode=mode, index_width=iw, payload_width=PW, heartbeat_in_head=heads)
        assert sink.inputs[k].signature == link.flip() == nodes["x"].inputs[k].link(sender=False).flip()
    for j, e in enumerate(net.out_edges("u")):
        assert source.outputs[j].signature == edge_link(e, mode=mode, index_width=iw, payload_width=PW)
