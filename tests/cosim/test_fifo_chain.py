"""Build the FIFO chain with Verilator and run fifo_chain_tests.py on it through cosim.runner."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.cosim

TESTS = Path(__file__).resolve().parent / "fifo_chain_tests.py"
TOP = "fifo_chain"
#: Random seed of every run, so a failure replays exactly.
SEED = 20240601


@pytest.fixture
def run_fifo_chain(verilator_toolchain, cosim_build_root, fifo_chain_verilog):
    """``run(test_filter=...) -> RunResults`` on the cached build of the chain."""
    from sfdf.cosim.runner import build_and_run

    def run(**kwargs):
        return build_and_run([fifo_chain_verilog], TOP, TESTS, cosim_build_root, seed=SEED, timeout_s=300,
                             **kwargs)

    return run


def test_every_word_in_order(run_fifo_chain):
    results = run_fifo_chain(test_filter=r"every_word_in_order")
    assert len(results.tests) == 4, results.summary()
    assert results.passed, results.summary()


def test_deadlock_is_reported_with_levels(run_fifo_chain):
    results = run_fifo_chain(test_filter=r"deadlock_when_sink_never_ready")
    assert list(results.tests) == ["fifo_chain_tests.deadlock_when_sink_never_ready"], results.summary()
    assert results.passed, results.summary()


def test_mismatch_fails_with_index_expected_and_got(run_fifo_chain):
    results = run_fifo_chain(test_filter=r"scoreboard_reports_mismatch")
    name = "fifo_chain_tests.scoreboard_reports_mismatch"
    assert results.failed == [name], results.summary()
    assert results.tests[name].message == (
        "ScoreboardError: m_axis_out: token #4 (index 5) differs in payload: "
        "expected (index=5, payload=51 = 0x33, last=0), got (index=5, payload=50 = 0x32, last=0)\n"
        "  previous 4 tokens (matched):\n"
        "    #0 (index=1, payload=10 = 0xa, last=0)\n"
        "    #1 (index=2, payload=20 = 0x14, last=0)\n"
        "    #2 (index=3, payload=30 = 0x1e, last=0)\n"
        "    #3 (index=4, payload=40 = 0x28, last=0)"
    )


def test_driver_errors_show_the_numbers(run_fifo_chain):
    results = run_fifo_chain(test_filter=r"driver_errors_show_the_numbers")
    assert len(results.tests) == 1 and results.passed, results.summary()


def test_second_run_reuses_the_build(run_fifo_chain):
    first = run_fifo_chain(test_filter=r"deadlock_when_sink_never_ready")
    second = run_fifo_chain(test_filter=r"deadlock_when_sink_never_ready")
    assert second.build_dir == first.build_dir
    assert not second.built
    assert second.passed, second.summary()
