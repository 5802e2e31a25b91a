"""``sfdf check --sized OUT``: the spec rewritten in its own text with the capacities for the nodes' rate
(``gen.specedit``), checked again, and every way it refuses in one line."""

import difflib
import json
import random
import re
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sfdf.cli import main
from sfdf.gen.analysis import check
from sfdf.gen.analysis.throughput import network_rate
from sfdf.gen.errors import UserError
from sfdf.gen.spec import parse_spec
from sfdf.gen.specedit import sizing_values, with_edge_values, with_values
from sfdf.hdl.timing import stage_timing

#: A split-join (branches of four nodes and one) with 000's credit messages: auto T and heartbeats.
SPLIT_JOIN = "\n".join(
    ['[network]\nname = "sj"\nmode = "credit"\nlive_credit = false\n']
    + [f'[[node]]\nname = "{v}"\n' for v in ("a", "e", "b1", "b2", "b3", "b4", "c1")]
    + [f'[[edge]]\nfrom = "{u}"\nto = "{v}"\ncapacity = 16\n'
       for u, v in (("a", "b1"), ("b1", "b2"), ("b2", "b3"), ("b3", "b4"), ("b4", "e"), ("a", "c1"), ("c1", "e"))])


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def rate(network):
    resolved = check(network).network
    return network_rate(resolved, stage_timing(resolved))[0]


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]


def test_residual_grows_the_skip_alone(capsys, examples, tmp_path):
    out = tmp_path / "sized.toml"
    status, text, err = run(capsys, "check", examples / "residual_pipelined.toml", "--sized", out)
    assert (status, err) == (0, "")
    assert text.splitlines()[-1] == f"sized spec: wrote {out} (a_e capacity 16 -> 27): deadlock-free, 1.000 tokens per cycle"
    before, after = (examples / "residual_pipelined.toml").read_text(), out.read_text()
    assert changed_lines(before, after) == ["- capacity = 16", "+ capacity = 27"]
    assert rate(parse_spec(before)) == Fraction(16, 27) and rate(parse_spec(after)) == 1


def test_sized_json(capsys, examples, tmp_path):
    out = tmp_path / "sized.toml"
    data = json.loads(run(capsys, "check", examples / "residual_pipelined.toml", "--sized", out, "--json")[1])
    assert data["sized"] == {"path": str(out), "written": True, "edges": {"a_e": {"capacity": 27}},
                             "deadlock_free": True, "tokens_per_cycle": 1.0, "exact": "1"}


def test_batched_credit_pins_every_auto_threshold_and_heartbeat(capsys, write_file, tmp_path):
    """With 000's credit messages the sizing holds at the T and heartbeats it was computed with: auto ones
    would follow the grown capacity (here to 14/19, below the 0.737 before sizing)."""
    spec, out = write_file("sj.toml", SPLIT_JOIN), tmp_path / "sized.toml"
    status, text, _ = run(capsys, "check", spec, "--sized", out)
    assert status == 0 and text.splitlines()[-1] == (
        f"sized spec: wrote {out} (c1_e capacity 16 -> 26; every auto T and heartbeat written as sized, on 7 "
        "edges): deadlock-free, 1.000 tokens per cycle")
    resolved = check(parse_spec(SPLIT_JOIN)).network
    written = parse_spec(out.read_text())
    assert [(e.threshold, e.interval) for e in written.edges] == [(e.threshold, e.interval) for e in resolved.edges]
    assert {e.name: e.capacity for e in written.edges if e.capacity != 16} == {"c1_e": 26}
    assert rate(parse_spec(SPLIT_JOIN)) < 1 and rate(written) == 1
    unpinned = parse_spec(SPLIT_JOIN).with_edges(replace(e, capacity=26) if e.name == "c1_e" else e
                                                 for e in parse_spec(SPLIT_JOIN).edges)
    assert rate(unpinned) == Fraction(14, 19)


def test_nothing_to_size_writes_the_spec_unchanged(capsys, examples, tmp_path):
    out = tmp_path / "sized.toml"
    status, text, _ = run(capsys, "check", examples / "variance.toml", "--sized", out)
    assert status == 0 and text.splitlines()[-1] == (
        f"sized spec: wrote {out} (unchanged: no capacity limits the rate): deadlock-free, 1.000 tokens per cycle")
    assert out.read_text() == (examples / "variance.toml").read_text()


def test_an_unsafe_network_is_not_sized(capsys, examples, tmp_path):
    out = tmp_path / "sized.toml"
    status, text, _ = run(capsys, "check", examples / "fig3_deadlock.toml", "--sized", out)
    assert status == 1 and not out.exists()
    assert text.splitlines()[-1] == f"sized spec: {out} not written: not deadlock-free: nothing to size"


@pytest.mark.parametrize("target, message", [
    ("same", "--sized: is the spec itself; name another file: the spec is kept as written"),
    ("folder", "--sized: is a folder; name the file to write the sized spec to"),
    ("missing", "--sized: its folder '{folder}' does not exist; create it, or choose another file"),
])
def test_sized_user_mistakes_are_one_line(capsys, examples, tmp_path, target, message):
    spec = tmp_path / "residual.toml"
    spec.write_text((examples / "residual.toml").read_text())
    out = {"same": spec, "folder": tmp_path, "missing": tmp_path / "no" / "sized.toml"}[target]
    message = message.format(folder=tmp_path / "no")
    assert run(capsys, "check", spec, "--sized", out) == (2, "", f"sfdf: error: {out}: {message}\n")
    assert spec.read_text() == (examples / "residual.toml").read_text()


def test_specedit_keeps_comments_quotes_and_adds_missing_keys():
    text = ('[network]\nname = "n"\nmode = "credit"\nlive_credit = false\n\n[[node]]\nname = "a"\n\n[[node]]\n'
            'name = "b"\n\n[[edge]]\nfrom = "a"\nto = "b"\n  "capacity" = 4   # small on purpose\n')
    after = with_edge_values(text, "n.toml", {"a_b": {"capacity": 9, "threshold": 5, "interval": None}})
    assert after.splitlines()[-3:] == ['  "capacity" = 9   # small on purpose', "  threshold = 5", '  interval = "inf"']
    edge = parse_spec(after).edges[0]
    assert (edge.capacity, edge.threshold, edge.interval) == (9, 5, None)


def test_specedit_refuses_what_it_cannot_rewrite():
    text = ('node = [{ name = "a" }, { name = "b" }]\nedge = [{ from = "a", to = "b", capacity = 4 }]\n\n'
            '[network]\nname = "n"\n')
    with pytest.raises(UserError) as caught:
        with_edge_values(text, "n.toml", {"a_b": {"capacity": 9}})
    assert str(caught.value) == ('n.toml: edge "a_b".capacity: cannot be rewritten in place (sfdf rewrites a key on '
                                 'its own line of an [[edge]] table); write capacity = 9 there by hand, or write the '
                                 'edge as an [[edge]] table')



def _spec_text(network, live_credit: bool, style: random.Random) -> str:
    """``network`` (credit mode) written as a spec in one of the layouts people write: keys in any order,
    indented or not, quoted or bare, with comments after values and between tables."""
    lines = ['[network]', f'name = "{network.name}"', 'mode = "credit"']
    lines += [] if live_credit else ["live_credit = false"]
    used = {v for e in network.edges for v in (e.src, e.dst)}
    lines += [""] + [f'[[node]]\nname = "{node.name}"\n' for node in network.nodes if node.name in used]
    for edge in network.edges:
        indent = style.choice(["", "  "])
        key = (lambda k: f'"{k}"') if style.random() < 0.3 else (lambda k: k)
        entries = [f'{key("from")} = "{edge.src}"', f'{key("to")} = "{edge.dst}"',
                   f'{key("capacity")} = {edge.capacity}' + style.choice(["", "   # tokens"])]
        if style.random() < 0.5:
            entries.append(f'{key("threshold")} = "auto"')
        if style.random() < 0.5:
            entries.append(f'{key("interval")} = "auto"  # 000 Alg. 4')
        style.shuffle(entries)
        lines += [style.choice(["# an edge", ""]), "[[edge]]" + style.choice(["", "   # comment"])]
        lines += [indent + entry for entry in entries] + [""]
    return "\n".join(lines)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), live_credit=st.booleans())
def test_sized_random_specs_reach_the_nodes_rate(seed, live_credit):
    """On random DAG specs in varied layouts, ``--sized``'s values are written in place (nothing else
    changes: the rewrite parses to exactly the network asked for) and the written spec streams at the
    rate the nodes allow, with 000's credit messages too (where its T and heartbeats are written as sized)."""
    from sfdf.gen.analysis.throughput import nodes_rate, throughput_summary
    from sfdf.gen.randomnet import random_dag

    rng = random.Random(seed)
    network = random_dag(rng, rng.randint(3, 7), rng.randint(3, 9), capacities=(2, 8), name="r")
    text = _spec_text(network, live_credit, rng)
    spec = parse_spec(text, "r.toml")
    report = check(spec)
    if not report.deadlock_free:
        return
    timing = stage_timing(report.network)
    summary = throughput_summary(report.network, timing)
    values = sizing_values(spec, report.network, summary["full_rate_sizing"])
    written = with_edge_values(text, "r.toml", values)
    assert all(re.search(r"""(capacity|threshold|interval)["']? =""", line) for line in changed_lines(text, written))
    after = check(parse_spec(written, "r.toml"))
    assert after.deadlock_free
    assert rate(parse_spec(written)) == nodes_rate(after.network, stage_timing(after.network))


def test_the_sizing_line_names_sized_only_where_it_would_write(capsys, examples, write_file):
    """An unsafe network is sized for the rate too (its deadlock needs filtering), but --sized writes nothing
    for it, so the line does not offer it."""
    lines = {name: next(line for line in run(capsys, "check", path)[1].splitlines() if line.startswith("capacities"))
             for name, path in (("residual", examples / "residual_pipelined.toml"), ("fig3", examples / "fig3_deadlock.toml"),
                                ("batched", write_file("sj.toml", SPLIT_JOIN)))}
    assert lines == {
        "residual": "capacities for the 1.000 tokens per cycle the nodes allow (--sized OUT writes them):",
        "fig3": ("capacities for the 1.000 tokens per cycle the nodes allow with T and the heartbeats above (as "
                 "auto ones would follow the capacities):"),
        "batched": ("capacities for the 1.000 tokens per cycle the nodes allow with T and the heartbeats above "
                    "(--sized OUT writes them all, as auto ones would follow the capacities):"),
    }


def test_specedit_sets_node_values_beside_edge_values():
    """Node keys go after the node's kernel (its name without one); params are added to those it has; an
    inline params table is rewritten whole; the rest of the text, comments too, is kept."""
    text = ('[network]\nname = "n"\n\n[[node]]\nname = "a"\nkernel = "random_filter"  # the source\n'
            'params = { rate = 0.25 }\n\n[[node]]\nname = "b"\n\n'
            '[[edge]]\nfrom = "a"\nto = "b"\ncapacity = 4\n')
    after = with_values(text, "n.toml", edges={"a_b": {"interval": 0}},
                        nodes={"a": {"ii": 3, "params": {"rate": 0.25, "seed": 9}}, "b": {"ii": 2}})
    assert after.splitlines()[4:12] == ['name = "a"', 'kernel = "random_filter"  # the source', "ii = 3",
                                        "params = { rate = 0.25, seed = 9 }", "", "[[node]]", 'name = "b"', "ii = 2"]
    network = parse_spec(after)
    a, b = network.nodes
    assert (a.ii, a.params["rate"], a.params["seed"], b.ii, network.edges[0].interval) == (3, 0.25, 9, 2, 0)
    with pytest.raises(UserError, match=r'n.toml: node: cannot be rewritten in place .*node "a": params'):
        with_values(text, "n.toml", nodes={"a": {"params": {"seed": 9}}})  # rate would be lost: refused
