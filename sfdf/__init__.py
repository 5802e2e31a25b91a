"""sfdf: deadlock-free streaming hardware for filtering dataflow networks.

The layers, each using only those before it (docs/architecture.md): :mod:`sfdf.gen` (spec, model,
analysis, reference model), :mod:`sfdf.hdl` (Amaranth components, the Verilog top and its manifest),
:mod:`sfdf.cosim` and :mod:`sfdf.boards` (simulators and boards), :mod:`sfdf.sw` (the host side), and
:mod:`sfdf.cli` on top.
"""
