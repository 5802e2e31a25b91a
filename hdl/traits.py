"""What elaboration reads of a platform, decoded in one place: :class:`PlatformTraits`.

Every component that builds differently per FPGA family reads a :class:`PlatformTraits`, never the
platform's attributes: the network's components take theirs from the elaboration plan
(:mod:`sfdf.hdl.plan`), and the primitives elaborated on their own (channels, the DSP multiplier, the board
link's FIFOs) resolve it from the platform Amaranth hands them with :meth:`PlatformTraits.of`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["GENERIC", "PlatformTraits"]

@dataclass(frozen=True)
class PlatformTraits:
    """The facts of an FPGA family that elaboration decides on (:meth:`of` resolves them).

    Members
    -------
    family : str
        The platform's family, lower case (``""``: generic Verilog, built as for ECP5).
    lutram : bool
        The family has LUT RAM (read combinationally), for a channel's rows behind its head register; iCE40
        has none (rows would be flip-flops and multiplexers: :func:`sfdf.hdl.channels.lutram_rows`).
    pipelined : bool
        Whether to build the registers that only buy clock: the kernels' pipeline stages, a node's two-slot
        offer registers (:func:`sfdf.hdl.offer.offer_slots`), a block-RAM channel's two output registers,
        and a board top's skid buffers and copy of each result beat (``sfdf.boards.core``). Not on iCE40, a
        small part that lacks logic cells rather than clock; there a join of two or more inputs keeps a
        one-slot offer register. Cycle for cycle the same tokens and messages leave every channel either
        way; only the latency differs.
    dsp_multiplier : bool
        Multiplies of up to 18-bit operands are ECP5 MULT18X18D blocks with their own input and output
        registers (:class:`sfdf.hdl.dsp.RegisteredMultiplier`); elsewhere registers around ``*``.
    """

    family: str = ""
    lutram: bool = True
    pipelined: bool = True
    dsp_multiplier: bool = False

    @classmethod
    def of(cls, platform) -> PlatformTraits:
        """The traits of ``platform``: an Amaranth platform or anything with a ``family``
        (:class:`sfdf.hdl.dsp.FamilyOnly`), ``None`` for generic Verilog, or traits already resolved."""
        if isinstance(platform, PlatformTraits):
            return platform
        family = str(getattr(platform, "family", "")).lower()
        small = family.startswith("ice")
        return cls(family=family, lutram=not small, pipelined=not small, dsp_multiplier=family == "ecp5")

    def to_json(self) -> dict:
        """The manifest's ``platform`` record."""
        return asdict(self)


#: The traits of generic Verilog (``sfdf generate``, the cosim).
GENERIC = PlatformTraits.of(None)
