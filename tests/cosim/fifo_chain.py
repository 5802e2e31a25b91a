"""A two-FIFO AXI4-Stream chain with docs/architecture.md port names, generated to Verilog for the cosim tests.

``s_axis_in`` -> ``fifo0`` -> ``fifo1`` -> ``m_axis_out``; ``m_axis_out_tuser`` is the computation
index of the word (words accepted since reset, from 1: docs/semantics.md), ``tlast`` passes through.
The FIFO levels stay visible in the Verilog hierarchy as ``fifo0.level`` and ``fifo1.level``.
"""

from __future__ import annotations

from pathlib import Path

from amaranth import Cat, Module, Signal
from amaranth.back import verilog
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

__all__ = ["DEPTHS", "FifoChain", "write_verilog"]

#: Capacities of ``fifo0`` and ``fifo1``.
DEPTHS = (4, 3)


class FifoChain(wiring.Component):
    """Two buffered FIFOs between an AXI4-Stream input and output, counting words on ``tuser``.

    Parameters
    ----------
    data_width, user_width : int
        Bits of ``tdata`` and of ``tuser``.
    depths : tuple of int
        Capacities of ``fifo0`` and ``fifo1``.

    Members
    -------
    s_axis_in_tdata : In(data_width)
    s_axis_in_tvalid, s_axis_in_tlast : In(1)
    s_axis_in_tready : Out(1)
    m_axis_out_tdata : Out(data_width)
    m_axis_out_tuser : Out(user_width)
    m_axis_out_tvalid, m_axis_out_tlast : Out(1)
    m_axis_out_tready : In(1)
    """

    def __init__(self, data_width: int = 16, user_width: int = 16, depths: tuple[int, int] = DEPTHS):
        if not all(isinstance(depth, int) and depth >= 1 for depth in depths) or len(depths) != 2:
            raise ValueError(f"FIFO chain depths must be two positive integers, not {depths!r}")
        self.data_width, self.user_width, self.depths = data_width, user_width, depths
        super().__init__({
            "s_axis_in_tdata": In(data_width), "s_axis_in_tvalid": In(1), "s_axis_in_tready": Out(1),
            "s_axis_in_tlast": In(1),
            "m_axis_out_tdata": Out(data_width), "m_axis_out_tuser": Out(user_width),
            "m_axis_out_tvalid": Out(1), "m_axis_out_tready": In(1), "m_axis_out_tlast": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        width = self.data_width + self.user_width + 1
        m.submodules.fifo0 = fifo0 = SyncFIFOBuffered(width=width, depth=self.depths[0])
        m.submodules.fifo1 = fifo1 = SyncFIFOBuffered(width=width, depth=self.depths[1])

        index = Signal(self.user_width, init=1)
        with m.If(self.s_axis_in_tvalid & self.s_axis_in_tready):
            m.d.sync += index.eq(index + 1)
        m.d.comb += [
            fifo0.w_data.eq(Cat(self.s_axis_in_tdata, index, self.s_axis_in_tlast)),
            fifo0.w_en.eq(self.s_axis_in_tvalid),
            self.s_axis_in_tready.eq(fifo0.w_rdy),
        ]
        wiring.connect(m, fifo0.r_stream, fifo1.w_stream)
        m.d.comb += [
            Cat(self.m_axis_out_tdata, self.m_axis_out_tuser, self.m_axis_out_tlast).eq(fifo1.r_data),
            self.m_axis_out_tvalid.eq(fifo1.r_rdy),
            fifo1.r_en.eq(self.m_axis_out_tready),
        ]
        return m


def write_verilog(path: Path, **params) -> Path:
    """Write the Verilog of ``FifoChain(**params)`` (module ``fifo_chain``, clock ``clk``, reset ``rst``).

    Source locations are left out so the text, hence the build folder, is the same in every checkout.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(verilog.convert(FifoChain(**params), name="fifo_chain", emit_src=False))
    return path
