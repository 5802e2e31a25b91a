"""The simulated device: a generated network's Verilog on Verilator behind a C++ harness, loaded with ctypes.

:mod:`~sfdf.sw.sim.harness` (the harness and wrapper generated from the manifest; templates in
``templates/``), :mod:`~sfdf.sw.sim.build` (the profile-guided build, kept in the build cache by content),
:mod:`~sfdf.sw.sim.fastsim` (the run time), :mod:`~sfdf.sw.sim.boardsim` (a board core with its UART
simulated bit by bit, behind a pseudo-terminal: ``sfdf board-sim``). The device API over it is
:mod:`sfdf.sw.device`.
"""
