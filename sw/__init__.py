"""sfdf host side, one wing per job: :mod:`sfdf.sw.sim` (the simulated device), :mod:`sfdf.sw.device` (the
device API over a simulated or a board device), :mod:`sfdf.sw.spark` (the Spark job), :mod:`sfdf.sw.stm`
(001's space-time memory) and :mod:`sfdf.sw.datasets` (input frames). docs/architecture.md draws the layers."""
