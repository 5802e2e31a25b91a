"""SDF analysis (004 Sec. 3): phases, repetitions, pull schedules and SDEP against 004's own numbers."""

import pytest
from graphs import fig_sdep
from graphs import sdf_edge as edge
from hypothesis import given, settings
from hypothesis import strategies as st

from sfdf.gen.model import Network, Node
from sfdf.gen.sdf.rates import SDFError, phases, pull_schedule, repetitions, sdep


def test_the_papers_table():
    net = fig_sdep()
    assert sdep(net, "A", "E", 4) == [5, 5, 5, 6]
    assert sdep(net, "B", "E", 4) == [0, 2, 2, 3]
    assert sdep(net, "A", "C", 3)[-1] == 17  # where 004's Eq. 1 (one steady state) says 18
    assert sdep(net, "A", "B", 1) == [2]


def test_repetitions_and_phases_of_the_papers_graph():
    net = fig_sdep()
    assert phases(net) == {"A": 2, "B": 1, "C": 1, "D": 1, "E": 2}
    assert repetitions(net) == {"A": 6, "B": 3, "C": 1, "D": 2, "E": 4}
    # one steady state of E's pull schedule fires every node its repetitions, SDEP grows by them
    assert sorted(pull_schedule(net, "E", 4)) == sorted("A" * 6 + "B" * 3 + "C" + "D" * 2 + "E" * 4)
    assert sdep(net, "A", "E", 8)[4:] == [5 + 6, 5 + 6, 5 + 6, 6 + 6]


def test_no_path_is_zero():
    net = fig_sdep()
    assert sdep(net, "E", "A", 3) == [0, 0, 0]
    assert sdep(net, "C", "B", 2) == [0, 0]  # parallel actors (004 leaves them out)


def test_inconsistent_rates_name_the_edge():
    net = Network(name="bad", nodes=tuple(Node(n) for n in "uvx"), edges=(
        edge("uv", "u", "v", push=2), edge("vx", "v", "x"), edge("ux", "u", "x")))
    with pytest.raises(SDFError, match=r"edge (vx|ux): the rates are inconsistent"):
        repetitions(net)


def test_phase_lists_of_one_node_must_agree():
    net = Network(name="bad", nodes=tuple(Node(n) for n in "uvw"), edges=(
        edge("uv", "u", "v", push=(1, 0)), edge("uw", "u", "w", push=(0, 1, 0))))
    with pytest.raises(SDFError, match=r"edge uw: edge uv lists 2 phases and edge uw 3"):
        phases(net)


def test_peeking_needs_more_items_than_it_pops():
    net = Network(name="peek", nodes=(Node("a"), Node("b")), edges=(edge("ab", "a", "b", pop=1, peek=3),))
    assert sdep(net, "a", "b", 3) == [3, 4, 5]
    with_initial = Network(name="peek", nodes=(Node("a"), Node("b")),
                           edges=(edge("ab", "a", "b", pop=1, peek=3, initial=2),))
    assert sdep(with_initial, "a", "b", 3) == [1, 2, 3]  # initial items count as already produced


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4)), min_size=1, max_size=4), st.integers(1, 12))
def test_chain_sdep_is_the_closed_form(rates, n):
    """On a chain, SDEP_{first<-last}(n) equals the closed form: the last actor needs n pops, so its
    sender ceil(n pop / push) firings, and so on back to the first (the least legal execution)."""
    names = [f"n{k}" for k in range(len(rates) + 1)]
    net = Network(name="chain", nodes=tuple(Node(x) for x in names),
                  edges=tuple(edge(f"e{k}", names[k], names[k + 1], push=p, pop=q) for k, (p, q) in enumerate(rates)))
    assert sdep(net, names[0], names[-1], n)[-1] == _least_firings(rates, n)


def _least_firings(rates, n):
    """Walk back from the last actor: it needs n * pop items, its sender ceil(need / push) firings."""
    need = n
    for push, pop in reversed(rates):
        need = -(-need * pop // push)
    return need


def test_an_edge_that_never_carries_items_joins_nothing():
    """push = pop = 0: the two sides have no balance between them; each is its own steady state."""
    net = Network(name="idle", nodes=tuple(Node(n) for n in "abcd"), edges=(
        edge("ab", "a", "b", push=2), edge("bc", "b", "c", push=0, pop=0), edge("cd", "c", "d", pop=3)))
    assert repetitions(net) == {"a": 1, "b": 2, "c": 3, "d": 1}
