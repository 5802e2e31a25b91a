"""sfdf hardware (Amaranth 0.5): channels, credit and in-band protocol logic, join, kernels, node, top.

See docs/hardware.md. :class:`sfdf.hdl.top.NetworkTop` is a whole network; :mod:`sfdf.hdl.generate`
writes it as Verilog with AXI4-Stream ports beside its manifest (:mod:`sfdf.hdl.manifest`).
"""
