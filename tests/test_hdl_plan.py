# amaranth: UnusedElaboratable=no
"""The elaboration plan (hdl/plan.py): decided once, carried into elaboration, recorded in the manifest."""

import inspect
import json

import pytest
from amaranth.back import rtlil

from sfdf.gen.analysis import check
from sfdf.gen.spec import load_spec
from sfdf.hdl import plan as plan_module
from sfdf.hdl.dsp import FamilyOnly
from sfdf.hdl.generate import generate
from sfdf.hdl.manifest import port_members, sink_tuser_fields
from sfdf.hdl.node import SFDFNode
from sfdf.hdl.plan import plan
from sfdf.hdl.single_stage import SingleStageNode
from sfdf.hdl.timing import hardware_rate, single_stage
from sfdf.hdl.top import NetworkTop
from sfdf.hdl.traits import GENERIC, PlatformTraits


def _resolved(examples, name):
    return check(load_spec(examples / f"{name}.toml")).network


def test_traits_by_family():
    """One decoding of a platform: generic Verilog is built as for ECP5 but with fabric multipliers."""
    assert PlatformTraits.of(None) == GENERIC == PlatformTraits()
    ice40 = PlatformTraits.of(FamilyOnly("iCE40"))
    assert (ice40.family, ice40.lutram, ice40.pipelined, ice40.dsp_multiplier) == ("ice40", False, False, False)
    ecp5 = PlatformTraits.of(FamilyOnly("ecp5"))
    assert (ecp5.lutram, ecp5.pipelined, ecp5.dsp_multiplier) == (True, True, True)
    assert PlatformTraits.of(ecp5) is ecp5


@pytest.mark.parametrize("family", [None, "ice40", "ecp5"])
@pytest.mark.parametrize("name", ["residual", "residual_pipelined", "variance"])
def test_single_stage_is_the_analysis_choice(examples, name, family):
    """The plan's single-stage nodes are those sfdf check reports (hdl.timing), on every platform."""
    network = _resolved(examples, name)
    platform = FamilyOnly(family) if family else None
    decided = plan(network, platform)
    assert decided.single_stage == single_stage(network, platform)
    assert {n for n, p in decided.nodes.items() if p.single_stage} == decided.single_stage
    auto = (hardware_rate(network, platform) or {}).get("auto_single_stage")
    pinned = {n.name for n in network.nodes if n.pipelined is False}
    assert decided.single_stage == pinned | set(auto["nodes"] if auto else ())


def test_elaboration_decides_nothing_again(examples, monkeypatch):
    """With a plan, elaborating the top runs no throughput analysis: the plan carries its single-stage nodes."""
    network = _resolved(examples, "residual")
    decided = plan(network)
    assert decided.single_stage  # "auto" makes the branch single-stage
    before = rtlil.convert(NetworkTop(network, plan=decided), emit_src=False)

    def refuse(*args, **kwargs):
        raise AssertionError("stage_timing called during elaboration")

    monkeypatch.setattr(plan_module, "stage_timing", refuse)
    top = NetworkTop(network, plan=decided)
    assert rtlil.convert(top, emit_src=False) == before


def test_generate_plans_once(examples, tmp_path, monkeypatch):
    """sfdf generate runs the single-stage analysis once, for the platform it elaborates for."""
    calls = []
    real = plan_module.stage_timing
    monkeypatch.setattr(plan_module, "stage_timing", lambda *a, **k: calls.append(a) or real(*a, **k))
    generate(load_spec(examples / "residual.toml"), tmp_path, platform=FamilyOnly("ice40"))
    assert len(calls) == 1 and calls[0][1] == PlatformTraits.of(FamilyOnly("ice40"))


def test_nodes_take_their_plan(examples):
    """A node is built from its part of the plan, not from a score of keywords."""
    assert list(inspect.signature(SFDFNode).parameters) == ["plan"]
    assert list(inspect.signature(SingleStageNode).parameters) == ["plan"]
    decided = plan(_resolved(examples, "residual"))
    single = next(p for p in decided.nodes.values() if p.single_stage)
    pipelined = next(p for p in decided.nodes.values() if not p.single_stage)
    with pytest.raises(ValueError, match="planned single-stage"):
        SFDFNode(single)
    with pytest.raises(ValueError, match="not planned single-stage"):
        SingleStageNode(pipelined)


def test_plan_elsewhere_is_planned_again(examples):
    """A top planned for generic Verilog and elaborated for iCE40 is built as iCE40's plan says."""
    network = _resolved(examples, "variance")
    ice40 = FamilyOnly("ice40")
    generic_top = rtlil.convert(NetworkTop(network), platform=ice40, emit_src=False)
    assert generic_top == rtlil.convert(NetworkTop(network, plan=plan(network, ice40)), platform=ice40, emit_src=False)


def test_manifest_records_the_plan(examples, tmp_path):
    """The manifest carries the plan's decisions: the platform's traits, single-stage nodes, offer slots,
    the edges whose data head carries the heartbeat's index and the watermark's window."""
    for family in (None, "ice40"):
        platform = FamilyOnly(family) if family else None
        _, j_path = generate(load_spec(examples / "variance.toml"), tmp_path / str(family), platform=platform)
        manifest = json.loads(j_path.read_text())
        decided = plan(_resolved(examples, "variance"), platform)
        assert manifest["platform"] == {**decided.traits.to_json(), "lutram_max_rows": 4 if family else 64}
        assert manifest["watermark_window"] == decided.window
        assert manifest["index_bits_inside"] == decided.index_width
        for name, node in decided.nodes.items():
            assert manifest["nodes"][name]["single_stage"] is node.single_stage
            assert manifest["nodes"][name]["offer_slots"] == node.offer_slots
        for name, edge in decided.edges.items():
            assert manifest["edges"][name]["heartbeat_in_head"] is edge.heartbeat_in_head
    assert {e for e, v in manifest["edges"].items() if v["heartbeat_in_head"]} == set()  # iCE40: none
    residual, _ = generate(load_spec(examples / "residual.toml"), tmp_path / "residual")
    nodes = json.loads(residual.with_suffix(".json").read_text())["nodes"]
    assert {n for n, v in nodes.items() if v["single_stage"]} == plan(_resolved(examples, "residual")).single_stage


def test_port_members_one_layout(examples):
    """Both tops (sfdf's and the no-control baseline) have the ports of hdl.manifest.port_members, whose sink
    tuser is the manifest's sink_tuser_fields."""
    from sfdf.boards.baseline import PlainNetworkTop

    network = _resolved(examples, "variance")
    members = port_members(network)
    assert NetworkTop(network).signature.members == PlainNetworkTop(network).signature.members
    assert dict(NetworkTop(network).signature.members) == members
    width = sum(f.width for f in sink_tuser_fields(network.index_width))
    assert all(members[s].signature.members["tuser"].shape == width for s in network.sinks)
