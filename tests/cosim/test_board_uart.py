"""The board core on Verilator with the variance network, cocotbext-uart playing the host at the board's
baud rate (1 Mbaud; the clock divided down to 5 MHz, see board_uart.py), through board_uart_tests.py."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.cosim

TESTS = Path(__file__).resolve().parent / "board_uart_tests.py"
SEED = 20261122


@pytest.fixture(scope="module")
def board_uart(verilator_toolchain, cosim_build_root, examples_dir, tmp_path_factory):
    """``run(test_filter) -> RunResults`` on the cached build of the board core around variance."""
    pytest.importorskip("cocotbext.uart", reason="cocotbext-uart is not installed: make install")
    from board_uart import TOP, write_board

    from sfdf.cosim.network import BUILD_ARGS
    from sfdf.cosim.runner import build_and_run
    from sfdf.gen.spec import load_spec

    v_path, j_path = write_board(load_spec(examples_dir / "variance.toml"), tmp_path_factory.mktemp("board_uart"))

    def run(test_filter):
        return build_and_run([v_path], TOP, TESTS, cosim_build_root / "board", seed=SEED, timeout_s=300,
                             test_filter=test_filter, build_args=BUILD_ARGS,
                             extra_env={"SFDF_BOARD_UART_MANIFEST": str(j_path)})
    return run


@pytest.fixture(scope="module")
def examples_dir():
    return Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("test", ["variance_frames_through_the_uart", "damaged_packet_is_dropped_and_acknowledged",
                                  "overflow_and_bad_headers_are_dropped",
                                  "break_resets_the_network_and_the_numbering"])
@pytest.mark.heavy
def test_board_over_uart(board_uart, test):
    results = board_uart(test)
    assert list(results.tests) == [f"board_uart_tests.{test}"], results.summary()
    assert results.passed, results.summary()
