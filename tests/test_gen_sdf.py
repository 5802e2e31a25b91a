"""004's teleport messaging: SDEP by the closed form (Eq. 3, 4) against the pull schedule and against
brute force (every legal execution, by definition), message delivery in the SDF model against brute
force, constrained schedules and unsatisfiable constraints."""

from __future__ import annotations

import itertools
import math
import random
from collections import deque

import pytest
from graphs import fig_sdep, sdf_networks
from graphs import sdf_edge as edge
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sfdf.gen.model import Edge, Message, Network, Node
from sfdf.gen.sdf.messages import Deliveries
from sfdf.gen.sdf.model import LateMessage, run_sdf
from sfdf.gen.sdf.rates import SDFError, edge_rates, phases, repetitions, sdep
from sfdf.gen.sdf.schedule import Unsatisfiable, constrained_schedule
from sfdf.gen.sdf.sdep import SDEPTable
from sfdf.gen.spec import load_spec

EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples"


# -- brute force: SDEP by its definition (004 Def. SDEP), over every legal execution -------------------

def brute_sdep(network, caps: dict[str, int]) -> dict[tuple[str, str, int], int]:
    """``{(A, B, n): min |phi ^ A| over executions phi with n firings of B}`` for every state with counts
    below ``caps``: a breadth-first search over firing-count vectors (the state of an SDF network)."""
    names = [n.name for n in network.nodes]
    count = phases(network)
    rates = {e.name: edge_rates(e, count) for e in network.edges}
    index = {n: k for k, n in enumerate(names)}

    def items(e, counts):
        push, pop, _ = rates[e.name]
        produced = sum(push[k % len(push)] for k in range(counts[index[e.src]]))
        consumed = sum(pop[k % len(pop)] for k in range(counts[index[e.dst]]))
        return e.initial + produced - consumed

    def ready(node, counts):
        k = counts[index[node]] % count[node]
        return all(items(e, counts) >= rates[e.name][2][k] for e in network.in_edges(node))

    start = tuple(0 for _ in names)
    seen, queue = {start}, deque([start])
    best: dict[tuple[str, str, int], int] = {}
    while queue:
        counts = queue.popleft()
        for a, b in itertools.permutations(names, 2):
            key = (a, b, counts[index[b]])
            best[key] = min(best.get(key, math.inf), counts[index[a]])
        for node in names:
            if counts[index[node]] < caps[node] and ready(node, counts):
                nxt = list(counts)
                nxt[index[node]] += 1
                nxt = tuple(nxt)
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
    return best


def search_caps(net, reps) -> dict[str, int]:
    """Counts the brute-force search must reach for SDEP_y<-x(m), m <= reps[x]: three steady states, and
    at least SDEP_z<-x(m) firings of every node z. The fewest firings that let x fire m times fire every
    node exactly its SDEP count at once (004's pull schedule), so with these caps each minimal execution
    lies inside the search, which peeks beyond pops can push past three steady states (peek 3 and 2 on a
    chain of pop 1 needs a fourth firing of its head). The caps come from the closed form, but a closed
    form that is wrong in either direction still fails: too high, the search finds a smaller minimum;
    too low, the true minimum needs counts the search does not reach, so its value comes out higher or
    is missing."""
    caps = {x: 3 * r for x, r in reps.items()}
    for x in reps:
        table = SDEPTable(net, x)
        for z in reps:
            if z != x:
                caps[z] = max(caps[z], max(table(z, m) for m in range(1, reps[x] + 1)))
    return caps


def brute_point(best, route, n, k):
    """004 Def. (Message delivery) with the brute-force SDEP."""
    if route.direction == "upstream":
        return best[(route.receiver, route.sender, n + k)] if n + k > 0 else 0
    return next(m for m in itertools.count(1) if best[(route.sender, route.receiver, m)] >= n + k)


# -- SDEP ---------------------------------------------------------------------------------------------

def test_closed_form_reproduces_the_papers_table():
    net = fig_sdep()
    table = SDEPTable(net, "E")
    assert table.series("A", 4) == [5, 5, 5, 6]
    assert table.series("B", 4) == [0, 2, 2, 3]
    assert SDEPTable(net, "C")("A", 3) == 17  # 004 Eq. 3 with q(3) = 2: 2 * 6 + SDEP(1)
    assert SDEPTable(net, "B")("A", 1) == 2
    assert SDEPTable(net, "A")("E", 5) == 0  # no path
    for x in "ABCDE":
        table = SDEPTable(net, x)
        for y in "ABCDE":
            assert table.series(y, 60) == sdep(net, y, x, 60), (y, x)


def test_pull_schedule_and_closed_form_meet_brute_force_on_the_papers_graph():
    net = fig_sdep()
    reps = repetitions(net)
    best = brute_sdep(net, {n: 3 * r for n, r in reps.items()})
    for x in "ABCDE":
        table = SDEPTable(net, x)
        for y in "ABCDE":
            if y == x:
                continue
            for n in range(1, 2 * reps[x] + 1):
                assert table(y, n) == best[(y, x, n)], (y, x, n)


def test_frequency_hopping_radio():
    """004 Sec. "Case Study": SDEP_RFtoIF<-D(n) = 512 n for each detector D; a hop detected at D's
    n-th firing with latency 6 retunes RFtoIF right after its firing 512 (n + 6)."""
    net = load_spec(EXAMPLES / "fhr.toml")
    for detector in ("D1", "D2", "D3", "D4"):
        table = SDEPTable(net, detector)
        assert table.series("RFtoIF", 20) == [512 * n for n in range(1, 21)]
        assert table("RFtoIF", 10**9) == 512 * 10**9
    deliveries = Deliveries(net)
    for route in deliveries.routes:
        assert route.direction == "upstream"
        assert [deliveries.point(route, n, 6) for n in (1, 2, 100)] == [512 * 7, 512 * 8, 512 * 106]
    plan = constrained_schedule(net)
    assert plan.fits, plan.over


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sdf_networks(max_nodes=5), st.integers(1, 200))
def test_closed_form_equals_the_pull_schedule(net, n):
    """004 Eq. 3, 4 against Thm. 1 (the pull schedule) for every pair, far beyond the table."""
    for x in (node.name for node in net.nodes):
        table = SDEPTable(net, x)
        for y in (node.name for node in net.nodes):
            if y != x:
                assert table(y, n) == sdep(net, y, x, n)[-1], (y, x, n)


#: Found by hypothesis in a clean-clone run: peeks past pops need a fourth firing of n0 for n2's first.
PEEKING_CHAIN = Network(name="random", nodes=(Node("n0"), Node("n1"), Node("n2")), edges=(
    edge("e0_1", "n0", "n1", peek=3), edge("e0_2", "n0", "n2"), edge("e1_2", "n1", "n2", peek=2)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sdf_networks(max_nodes=4))
@example(net=PEEKING_CHAIN)
def test_sdep_and_message_delivery_meet_brute_force(net):
    """SDEP by definition (every legal execution within :func:`search_caps`) equals the closed form; the
    model delivers every message at the firing 004's definition names with that SDEP."""
    reps = repetitions(net)
    best = brute_sdep(net, search_caps(net, reps))
    names = [x.name for x in net.nodes]
    for x in names:
        table = SDEPTable(net, x)
        for y in names:
            for m in range(1, reps[x] + 1):
                if y != x:
                    assert table(y, m) == best[(y, x, m)], (y, x, m)
    try:
        plan = constrained_schedule(net)
    except Unsatisfiable:
        return
    run = run_sdf(net, steady_states=1)
    deliveries = Deliveries(net)
    for d in run.deliveries:
        route = next(r for r in deliveries.routes if r.message == d.message and r.receiver == d.receiver)
        k = route.latency[0]
        key_ok = all(key in best for key in _keys(route, d.n, k, d.firing))
        if key_ok:
            assert d.firing == brute_point(best, route, d.n, k), (route, d)
    assert plan.repetitions == reps


def _keys(route, n, k, firing):
    if route.direction == "upstream":
        return [(route.receiver, route.sender, n + k)] if n + k > 0 else []
    return [(route.sender, route.receiver, m) for m in range(1, firing + 1)]


# -- the model ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["teleport.toml", "fhr.toml"])
def test_every_schedule_gives_the_same_outputs_and_deliveries(spec):
    """Constrained, random and eager (adversarial) schedules to the same counts: Kahn determinism and
    exact delivery make outputs and deliveries equal; a wrong delivery would change the outputs."""
    net = load_spec(EXAMPLES / spec)
    states = 8 if spec == "fhr.toml" else 4  # the radio: a retune lands 6 frames after its hop
    runs = [run_sdf(net, steady_states=states, schedule=s, seed=seed)
            for s, seed in [("constrained", 0), ("random", 1), ("random", 2), ("eager", 0)]]
    first = runs[0]
    assert first.deliveries
    for run in runs[1:]:
        assert run.outputs == first.outputs
        assert sorted(run.deliveries, key=repr) == sorted(first.deliveries, key=repr)
        assert run.firings != first.firings or run is first


def test_the_teleport_example_delivers_where_004_says():
    net = load_spec(EXAMPLES / "teleport.toml")
    run = run_sdf(net, steady_states=2)
    down = [(d.n, d.when, d.firing) for d in run.deliveries if d.message == 0][:6]
    # A -> E latency 2: before E's firing min m with SDEP_A<-E(m) >= n + 2; SDEP_A<-E = 5, 5, 5, 6, 11, ...
    assert down == [(1, "before", 1), (2, "before", 1), (3, "before", 1), (4, "before", 4), (5, "before", 5),
                    (6, "before", 5)]
    up = [(d.n, d.when, d.firing) for d in run.deliveries if d.message == 1][:4]
    # E -> B latency 1: after B's firing SDEP_B<-E(n + 1) = 2, 2, 3, then 0 + 3 (one steady state on)
    assert up == [(1, "after", 2), (2, "after", 2), (3, "after", 3), (4, "after", 3)]


def test_a_schedule_that_passes_a_delivery_point_is_refused():
    """Upstream latency 0 from D to A on a chain: A may not fire its second time before D's first
    firing has sent the message due right after A's first."""
    net = Network(name="chain", nodes=tuple(Node(x) for x in "ABCD"),
                  edges=(edge("AB", "A", "B"), edge("BC", "B", "C"), edge("CD", "C", "D")),
                  messages=(Message("D", ("A",), (0, 0)),))
    run_sdf(net, firings=list("ABCDABCD"))
    with pytest.raises(LateMessage, match="passed the point after its firing 1"):
        run_sdf(net, firings=list("AABCD"))


# -- constraints and scheduling -------------------------------------------------------------------------

def chain(*messages, capacity=1 << 16):
    return Network(name="chain", nodes=tuple(Node(x) for x in "ABCD"),
                   edges=tuple(Edge(name=f"{a}{b}", src=a, dst=b, capacity=capacity) for a, b in ("AB", "BC", "CD")),
                   messages=messages)


def test_004s_unsatisfiable_pair_is_named_with_its_path():
    """004 Fig. "unsatisfiable message constraints": B -> C with negative latency wants the B-C buffer
    full, D -> A upstream wants it empty; each alone is satisfiable."""
    b_to_c, d_to_a = Message("B", ("C",), (-10, -10)), Message("D", ("A",), (0, 0))
    assert constrained_schedule(chain(b_to_c)).buffers["BC"] == 11
    assert constrained_schedule(chain(d_to_a)).buffers["BC"] == 1
    with pytest.raises(Unsatisfiable) as caught:
        constrained_schedule(chain(b_to_c, d_to_a))
    text = str(caught.value)
    assert "message[0] B -> C (downstream, latency -10)" in text and "message[1] D -> A (upstream, latency 0)" in text
    assert {actor for actor, _ in caught.value.path} == set("ABCD")


def test_capacities_decide_whether_a_schedule_fits():
    plan = constrained_schedule(chain(Message("B", ("C",), (-10, -10)), capacity=8))
    assert plan.over == [("BC", 11, 8)] and not plan.fits


def test_a_range_is_met_at_its_loosest_end():
    plan = constrained_schedule(chain(Message("B", ("C",), (-10, 0))))
    assert plan.buffers["BC"] == 1


def test_a_cycle_without_initial_items_starves():
    net = Network(name="loop", nodes=(Node("a"), Node("b")),
                  edges=(edge("ab", "a", "b"), edge("ba", "b", "a")))
    with pytest.raises(SDFError, match="directed cycle .* starves"):
        constrained_schedule(net)
    live = Network(name="loop", nodes=(Node("a"), Node("b")),
                   edges=(edge("ab", "a", "b"), edge("ba", "b", "a", initial=1)))
    plan = constrained_schedule(live)
    assert plan.steady in (["a", "b"], ["b", "a"])


def test_a_latency_range_is_delivered_at_its_min_point_by_every_schedule():
    """The model (as the hardware) holds a receiver at a range's ``min`` point until the message comes, so
    random, eager and constrained schedules deliver at the same firings and give the same outputs."""
    net = chain(Message("A", ("D",), (-1, 3)), Message("D", ("B",), (1, 4)))
    runs = [run_sdf(net, steady_states=6, schedule="random", seed=s) for s in range(5)]
    runs += [run_sdf(net, steady_states=6, schedule=s) for s in ("constrained", "eager")]
    assert len({tuple(run.outputs["D"]) for run in runs}) == 1
    assert len({tuple(sorted(run.deliveries, key=repr)) for run in runs}) == 1
    deliveries = Deliveries(net)
    for d in runs[0].deliveries:
        route = next(r for r in deliveries.routes if r.message == d.message)
        assert d.firing == deliveries.point(route, d.n, route.latency[0])


def test_a_firing_sequence_past_a_ranges_min_point_is_refused():
    """D's message to B, upstream with latency [1, 4]: after B's firing 2 for D's first firing; B firing
    a third time before D has fired passes that point (004 would still allow it up to the max point)."""
    net = chain(Message("D", ("B",), (1, 4)))
    run_sdf(net, firings=list("ABCDABCD"))
    with pytest.raises(LateMessage, match="passed the point after its firing 2"):
        run_sdf(net, firings=list("ABABABCD"))


def test_random_networks_run_in_the_model():
    rng = random.Random(5)
    for _ in range(3):
        r = rng.randint(1, 3)
        net = Network(name="pair", nodes=(Node("a"), Node("b")), edges=(edge("ab", "a", "b", push=r, pop=1),))
        assert run_sdf(net, steady_states=2).outputs["b"]


# -- the spec and the CLI -------------------------------------------------------------------------------

SDF_SPEC = """\
[network]
name = "sdf"

[[node]]
name = "a"
{node}

[[node]]
name = "b"

[[node]]
name = "c"

[[edge]]
from = "a"
to = "b"
capacity = 8
{ab}

[[edge]]
from = "b"
to = "c"
capacity = 8
{bc}
{extra}
"""


def sdf_spec(tmp_path, ab="", bc="", node="", extra=""):
    path = tmp_path / "sdf.toml"
    path.write_text(SDF_SPEC.format(ab=ab, bc=bc, node=node, extra=extra))
    return path


def cli(capsys, *argv):
    from sfdf.cli import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


INVALID = [
    ({"ab": "push = 2", "extra": '[[edge]]\nfrom = "a"\nto = "c"\ncapacity = 8'}, "the rates are inconsistent"),
    ({"ab": "push = -1"}, "edge[0].push: must be an integer in 0..65536"),
    ({"ab": 'pop = "x"'}, "edge[0].pop: must be an integer"),
    ({"ab": "push = []"}, "edge[0].push: lists 0 phases"),
    ({"ab": "push = [1, 0]", "extra": '[[edge]]\nfrom = "a"\nto = "c"\ncapacity = 8\npush = [1, 0, 1]'},
     "lists 2 phases and edge"),
    ({"ab": "pop = 2\npeek = 1"}, "edge[0].peek: peeks 1 but pops 2"),
    ({"ab": "initial = 9"}, "edge[0].initial: 9 exceeds capacity 8"),
    ({"ab": "push = 2\npop = 2", "extra": '[[edge]]\nfrom = "c"\nto = "a"\ncapacity = 8'}, "starves"),
    ({"ab": "push = 0"}, "no steady state"),
    ({"node": 'kernel = "random_filter"', "ab": "push = 2\npop = 2"}, "runs SDF kernels"),
    ({"node": 'kernel = "antenna"', "ab": "push = 2\npop = 2"},
     'node "a".kernel: antenna pushes what it pops, yet phase 1 pops 1 and pushes 2'),
    ({"node": 'kernel = "magnitude"', "ab": "push = 2\npop = 2"}, 'node "a".kernel: magnitude has one input and one output'),
    ({"node": 'kernel = "rf_to_if"', "ab": "push = 2\npop = 2"}, 'node "a".kernel: rf_to_if pops 1 sample on its first input'),
    ({"node": 'kernel = "detector"', "ab": "push = 2\npop = 2"}, 'node "a".kernel: detector has one input'),
    ({"node": 'kernel = "forward"', "extra": '[[message]]\nfrom = "a"\nto = "c"'},
     'node "a".kernel: forward never sends, yet the node sends a [[message]]'),
    ({"node": 'kernel = "detector"\nparams = { holdoff = -1 }'}, 'node "a".params.holdoff'),
    ({"node": 'kernel = "sdf_test"\nparams = { send = 1.5 }', "ab": "push = 2\npop = 2"}, "node \"a\".params.send"),
    ({"node": 'kernel = "sdf_test"\nparams = { rate = 0.5 }', "ab": "push = 2\npop = 2"},
     "unknown parameter of kernel \"sdf_test\""),
    ({"extra": '[[message]]\nfrom = "c"\nto = "a"\nlatency = -1'}, "message[0].latency: a is upstream of c"),
    ({"extra": '[[message]]\nfrom = "a"\nto = "c"\nlatency = [3, 1]'}, "message[0].latency: [3, 1] has min above max"),
    ({"extra": '[[message]]\nfrom = "a"\nto = "x"'}, "message[0].to: unknown node"),
    ({"extra": '[[message]]\nfrom = "a"\nto = ["b", "b"]'}, "message[0].to: lists a node twice"),
    ({"extra": '[[message]]\nfrom = "a"\nto = "a"'}, "message[0].to: a sends to itself"),
    ({"extra": '[[message]]\nfrom = "a"\nto = "c"\nlatency = [1, 2, 3]'}, "message[0].latency: lists 3 values"),
    ({"extra": '[[message]]\nfrom = "a"\nto = "c"\ndelay = 1'}, "message[0].delay: unknown key"),
    ({"extra": '[[message]]\nto = "c"'}, "message[0].from: missing"),
]


@pytest.mark.parametrize("fields, words", INVALID, ids=[w for _, w in INVALID])
@pytest.mark.parametrize("command", ["schedule", "simulate"])
def test_every_invalid_sdf_class_is_one_line_exit_2(tmp_path, capsys, fields, words, command):
    status, _, err = cli(capsys, command, sdf_spec(tmp_path, **fields))
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1 and words in lines[0] and "Traceback" not in err, err


def test_parallel_actors_cannot_message(tmp_path, capsys):
    path = tmp_path / "par.toml"
    path.write_text('[network]\nname = "p"\n' + "".join(f'[[node]]\nname = "{n}"\n' for n in "abc")
                    + '[[edge]]\nfrom = "a"\nto = "b"\ncapacity = 4\n[[edge]]\nfrom = "a"\nto = "c"\ncapacity = 4\n'
                    + '[[message]]\nfrom = "b"\nto = "c"\n')
    status, _, err = cli(capsys, "schedule", path)
    assert status == 2 and "message[0].to: b and c are parallel" in err


def test_sfdf_commands_refuse_an_sdf_network(tmp_path, capsys):
    path = sdf_spec(tmp_path, ab="push = 2\npop = 2")
    status, _, err = cli(capsys, "intervals", path, "--algorithm", "heartbeat")
    assert status == 2 and "is an SDF network" in err and "sfdf check, sfdf schedule" in err


def test_generate_writes_an_sdf_network_and_refuses_what_its_hardware_cannot_carry(tmp_path, capsys):
    import json

    status, out, _ = cli(capsys, "generate", sdf_spec(tmp_path, ab="push = 2\npop = 2"), "-o", tmp_path / "o")
    manifest = json.loads(next((tmp_path / "o").glob("*.json")).read_text())
    assert status == 0 and "wrote" in out and manifest["mode"] == "sdf"
    assert next((e["push"], e["pop"], e["peek"], e["initial"]) for e in manifest["edges"].values()) == ([2], [2], [2], 0)
    assert {p["name"] for p in manifest["ports"]} == {"s_axis_a", "m_axis_c"}
    small = sdf_spec(tmp_path, ab="push = 3\npop = 3").rename(tmp_path / "small.toml")
    small.write_text(small.read_text().replace("capacity = 8", "capacity = 2", 1))
    skew = tmp_path / "skew.toml"  # A -> D must hold what A sends while B gathers 3: 2 places deadlock
    skew.write_text('[network]\nname = "skew"\n' + "".join(f'[[node]]\nname = "{n}"\n' for n in "ABD") + "".join(
        f'[[edge]]\nfrom = "{a}"\nto = "{b}"\ncapacity = {c}\n{rates}\n'
        for a, b, c, rates in [("A", "B", 4, "pop = 3"), ("B", "D", 4, "push = 3"), ("A", "D", 2, "")]))
    unsat = sdf_spec(tmp_path, extra='[[edge]]\nfrom = "c"\nto = "d"\ncapacity = 8\n'
                     '[[message]]\nfrom = "b"\nto = "c"\nlatency = -10\n[[message]]\nfrom = "d"\nto = "a"\nlatency = 0')
    unsat = unsat.rename(tmp_path / "unsat.toml")  # sdf_spec writes one file
    unsat.write_text(unsat.read_text().replace('[[node]]\nname = "c"\n', '[[node]]\nname = "c"\n\n[[node]]\nname = "d"\n'))
    status, _, _ = cli(capsys, "generate", EXAMPLES / "teleport.toml", "-o", tmp_path / "t")
    assert status == 0 and json.loads((tmp_path / "t" / "teleport.json").read_text())["messages"]
    cases = [(unsat, 1, "unsatisfiable message constraints"),
             (small, 2, "capacity: is 2, below the 3 items one firing needs"),
             (skew, 1, "A waits for room for 1 items on A_D")]
    for spec, code, words in cases:
        status, _, err = cli(capsys, "generate", spec, "-o", tmp_path / "p")
        assert status == code and words in err and "Traceback" not in err, err


def test_schedule_sdep_and_simulate_on_the_examples(capsys):
    import json

    status, out, _ = cli(capsys, "schedule", EXAMPLES / "teleport.toml", "--json")
    data = json.loads(out)
    assert status == 0 and data["repetitions"] == {"A": 6, "B": 3, "C": 1, "D": 2, "E": 4}
    assert sorted(data["steady"]) == sorted("A" * 6 + "B" * 3 + "C" + "D" * 2 + "E" * 4) and data["satisfiable"]
    assert [m["direction"] for m in data["messages"]] == ["downstream", "upstream"]
    status, out, _ = cli(capsys, "sdep", EXAMPLES / "teleport.toml", "--upstream", "B", "--downstream", "E",
                         "--count", "4", "--json")
    assert status == 0 and json.loads(out) == {"upstream": "B", "downstream": "E", "sdep": [0, 2, 2, 3]}
    status, out, _ = cli(capsys, "simulate", EXAMPLES / "teleport.toml", "--steady-states", "2", "--json")
    data = json.loads(out)
    assert status == 0 and data["computations"] == 32 and data["control_messages"] == len(data["deliveries"]) > 0
    status, out, _ = cli(capsys, "simulate", EXAMPLES / "fhr.toml", "--steady-states", "8")
    assert status == 0 and "sent at D2's firing 2, handled after RFtoIF's firing 4096" in out
    status, _, err = cli(capsys, "sdep", EXAMPLES / "fhr.toml", "--upstream", "X", "--downstream", "D1", "--count", "2")
    assert status == 2 and "--upstream: names no node" in err
    status, _, err = cli(capsys, "simulate", EXAMPLES / "teleport.toml", "--computations", "5", "--steady-states", "1")
    assert status == 2 and "--computations: cannot be given with --steady-states" in err
    status, _, err = cli(capsys, "simulate", EXAMPLES / "teleport.toml", "--input", EXAMPLES / "frames.txt")
    assert status == 2 and "--input: does not apply to an SDF network" in err


def test_simulate_runs_n_firings_of_the_sources_and_reports_what_is_pending(capsys):
    """--computations N: A (teleport's source) fires 12 times, the rest as far as items and messages let them,
    every scheduler alike; each delivery and pending message with the keys sfdf cosim --json reports."""
    import json

    runs = []
    for scheduler in ("random", "round_robin", "adversarial"):
        status, out, _ = cli(capsys, "simulate", EXAMPLES / "teleport.toml", "--computations", "12", "--scheduler",
                             scheduler, "--json")
        assert status == 0
        runs.append(json.loads(out))
    first = runs[0]
    assert all((r["outputs"], r["deliveries"], r["pending"]) == (first["outputs"], first["deliveries"],
                                                                  first["pending"]) for r in runs)
    assert first["source_firings"] == 12 and first["deliveries"] and first["pending"]
    assert set(first["deliveries"][0]) == {"message", "from", "to", "sent", "handled", "side"}
    net = load_spec(EXAMPLES / "teleport.toml")
    run = run_sdf(net, source_firings=12)
    assert run.firings.count("A") == 12
    # what is pending is due at a firing past the receiver's last
    assert all(p.firing > run.firings.count(p.receiver) + (p.when == "after") - 1 for p in run.pending)
    assert {(d.message, d.n) for d in run.deliveries} | {(p.message, p.n) for p in run.pending} == \
        {(0, n) for n in range(1, 13)} | {(1, n) for n in range(1, run.firings.count("E") + 1)}


def test_simulate_computations_needs_a_source(tmp_path, capsys):
    path = sdf_spec(tmp_path, ab="push = 2\npop = 2")
    loop = path.read_text().replace('to = "b"', 'to = "b"', 1) + '[[edge]]\nfrom = "c"\nto = "a"\ncapacity = 8\ninitial = 4\n'
    path.write_text(loop)
    status, _, err = cli(capsys, "simulate", path, "--computations", "5")
    assert status == 2 and "--computations: counts firings of the sources, and this SDF network has none" in err


def test_schedule_exit_1_when_unsatisfiable_or_beyond_capacity(tmp_path, capsys):
    unsat = sdf_spec(tmp_path, extra='[[edge]]\nfrom = "c"\nto = "d"\ncapacity = 8\n'
                     '[[message]]\nfrom = "b"\nto = "c"\nlatency = -10\n[[message]]\nfrom = "d"\nto = "a"\nlatency = 0')
    unsat.write_text(unsat.read_text().replace('[[node]]\nname = "c"\n', '[[node]]\nname = "c"\n\n[[node]]\nname = "d"\n'))
    status, out, _ = cli(capsys, "schedule", unsat)
    assert status == 1 and "unsatisfiable message constraints" in out and "message[1] d -> a" in out
    tight = sdf_spec(tmp_path, extra='[[message]]\nfrom = "b"\nto = "c"\nlatency = -10')
    status, out, _ = cli(capsys, "schedule", tight)
    assert status == 1 and "edge b_c needs 11 items, capacity 8" in out


def test_every_interleaving_delivers_at_the_same_firings_or_is_refused():
    """Brute force over schedules: every order of the firings that data allows (a diamond, three steady
    states, an upstream and a downstream message). Each either makes a message late (refused) or gives
    exactly the constrained schedule's outputs and deliveries; both kinds exist."""
    net = Network(name="diamond", nodes=tuple(Node(x) for x in "ABCD"),
                  edges=(edge("AB", "A", "B"), edge("AC", "A", "C", push=2, pop=2), edge("BD", "B", "D"),
                         edge("CD", "C", "D")),
                  messages=(Message("D", ("A",), (1, 1)), Message("A", ("D",), (-1, -1))))
    golden = run_sdf(net, steady_states=3)
    target = {x: golden.firings.count(x) for x in "ABCD"}

    def orders(prefix, fired):  # single-phase rates: an edge holds push * fired(src) - pop * fired(dst)
        if fired == target:
            yield list(prefix)
            return
        for x in "ABCD":
            if fired[x] < target[x] and all(e.push * fired[e.src] - e.pop * fired[x] >= e.pop
                                            for e in net.in_edges(x)):
                prefix.append(x)
                fired[x] += 1
                yield from orders(prefix, fired)
                fired[x] -= 1
                prefix.pop()

    valid = late = 0
    for order in orders([], dict.fromkeys("ABCD", 0)):
        try:
            run = run_sdf(net, firings=order)
        except LateMessage:
            late += 1
            continue
        valid += 1
        assert run.outputs == golden.outputs
        assert sorted(run.deliveries, key=repr) == sorted(golden.deliveries, key=repr)
    assert valid > 100 and late > 100, (valid, late)


def test_sdf_test_kernel_is_refused_outside_sdf_networks(tmp_path, capsys):
    path = sdf_spec(tmp_path, node='kernel = "sdf_test"')
    status, _, err = cli(capsys, "check", path)
    assert status == 2 and err.count("\n") == 1 and "sdf_test runs in SDF networks only" in err


def test_a_seeded_send_probability_decides_which_firings_send(tmp_path):
    """send = 0: no message at all; send = 0.5: some firings send, the same ones under every schedule (the
    kernel's LFSR steps once per firing), and each lands where 004 puts a message sent at that firing."""
    text = (EXAMPLES / "teleport.toml").read_text()
    silent = text.replace('name = "A"\n', 'name = "A"\nkernel = "sdf_test"\nparams = { send = 0.0 }\n', 1)
    (tmp_path / "silent.toml").write_text(silent)
    run = run_sdf(load_spec(tmp_path / "silent.toml"), source_firings=60)
    assert {d.message for d in run.deliveries} == {1}  # E still sends every firing
    half = text.replace('name = "A"\n', 'name = "A"\nkernel = "sdf_test"\nparams = { send = 0.5, seed = 9 }\n', 1)
    (tmp_path / "half.toml").write_text(half)
    net = load_spec(tmp_path / "half.toml")
    runs = [run_sdf(net, source_firings=60, schedule=s, seed=k) for s, k in
            (("constrained", 0), ("random", 1), ("random", 2), ("eager", 0))]
    assert len({(tuple(r.outputs["E"]), tuple(r.deliveries)) for r in runs}) == 1
    sent = sorted(d.n for d in runs[0].deliveries + runs[0].pending if d.message == 0)
    assert 15 < len(sent) < 45 and len(set(sent)) == len(sent)
    deliveries = Deliveries(net)
    route = next(r for r in deliveries.routes if r.message == 0)
    assert all(d.firing == deliveries.point(route, d.n, 2) for d in runs[0].deliveries if d.message == 0)


def test_build_elaborates_an_sdf_network_for_a_board(tmp_path, capsys):
    """``sfdf build --no-build``: the SDF top inside the board's core (its sources without ``tlast``), every
    file written; a deadlocking SDF network is refused before any tool runs."""
    status, out, _ = cli(capsys, "build", EXAMPLES / "teleport.toml", "--board", "ulx3s-85f", "--no-build",
                         "-o", tmp_path / "b")
    assert status == 0 and "no tool run" in out
    assert "module \\sfdf_board.network.network" in (tmp_path / "b" / "teleport.board.v").read_text()
    skew = tmp_path / "skew.toml"
    skew.write_text('[network]\nname = "skew"\n' + "".join(f'[[node]]\nname = "{n}"\n' for n in "ABD") + "".join(
        f'[[edge]]\nfrom = "{a}"\nto = "{b}"\ncapacity = {c}\n{rates}\n'
        for a, b, c, rates in [("A", "B", 4, "pop = 3"), ("B", "D", 4, "push = 3"), ("A", "D", 2, "")]))
    status, _, err = cli(capsys, "build", skew, "--board", "ulx3s-85f", "--no-build", "-o", tmp_path / "s")
    assert status == 1 and "A waits for room for 1 items on A_D" in err and "refusing to build" in err
