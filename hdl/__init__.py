"""sfdf hardware (Amaranth 0.5): channels, credit and in-band protocol logic, join, kernels, node, top.

See docs/hardware.md. :class:`hdl.top.NetworkTop` is a whole network; ``gen.generate`` turns it into
Verilog with AXI4-Stream ports and a manifest.
"""
