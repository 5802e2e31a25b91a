"""The reference model: an event-level, cycle-free simulator of SFDF networks (000, 002, 003).

It runs any :class:`sfdf.gen.model.Network` in ``credit`` or ``inband`` mode with the semantics of
docs/semantics.md, produces each sink's output (the golden for cosim), and, when the network
deadlocks, reports the blocking cycle of the Deadlock Theorem (002 Thm. 2.1).

Modules: :mod:`.channels` (data and control channels), :mod:`.link` (an edge at run time),
:mod:`.node`, :mod:`.credit`, :mod:`.inband` (the node state machines), :mod:`.kernels`,
:mod:`.scheduler`, :mod:`.adversary` (002 Thm. 2.2's filtering history), :mod:`.blocking`
(waits-for analysis), :mod:`.result`, :mod:`.simulate` (the entry point).
"""

from .adversary import adversarial_filter_history
from .result import SimResult
from .simulate import FRAME_END, random_words, simulate

__all__ = ["FRAME_END", "SimResult", "adversarial_filter_history", "random_words", "simulate"]
