"""Formal proofs of the protocol invariants with SymbiYosys (docs/hardware.md, "Formal proofs").

* :mod:`.sby`: run one proof (k-induction, ``smtbmc`` on Yices 2) of an Amaranth harness; PASS, FAIL with
  a counterexample trace, or UNKNOWN;
* :mod:`.fifo`: the channel contract as a transparent model FIFO;
* :mod:`.channel`: ``DataChannel`` / ``ControlChannel`` refine it (exact capacity, FIFO order);
* :mod:`.credit_edge`: one credit edge (000 Alg. 1, 2, 4; Thm. 3.2);
* :mod:`.inband_edge`: one in-band edge (002 Alg. 2, 5; 003 output buffers);
* :mod:`.join`: the least-index join (002 Alg. 1, 5);
* :mod:`.mutants`: deliberately broken variants that make those proofs fail;
* :mod:`.trace`: a counterexample VCD as a table.
"""
