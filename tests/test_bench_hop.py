"""bench/hop.py's floor of a one-cycle hop is a correct hop: its tokens are the filters', in order, with the
heartbeat rule's dummies, one cycle per hop (else its Fmax would bound nothing)."""

import pytest

from benches import load_bench


def _bench():
    return load_bench("hop")


@pytest.mark.parametrize(("rate", "ready"), [(0.0, 1.0), (0.3, 0.7), (0.9, 0.5)])
def test_floor_chain_passes_what_the_filters_pass(rate, ready):
    hop = _bench()
    result = hop.check_floor(hop.FloorChain(4, rate, plain=False, capacity=4), words=120, ready=ready)
    if rate == 0.0:  # nothing filtered: every word, and one cycle per hop after the first channel's
        assert (result["tokens"], result["first_latency_cycles"]) == (120, 5)
    if rate == 0.9:  # nearly everything filtered: the sink learns the indices from dummies
        assert result["dummies_seen"] > 0


def test_the_check_fails_where_the_tokens_differ(monkeypatch):
    hop = _bench()
    monkeypatch.setattr(hop, "passed_filters", lambda tokens, hops, rate: tokens[1:])
    with pytest.raises(AssertionError, match="differ from the filters'"):
        hop.check_floor(hop.FloorChain(2, 0.0, plain=False, capacity=2), words=20)
