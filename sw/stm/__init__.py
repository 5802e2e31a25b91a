"""Space-time memory (001, Stampede): timestamped channels read by many connections, and their exact
garbage collection.

:mod:`.model` (threads, channels, connections, the operations and visibility rules V1-V5), :mod:`.gc`
(minKV, minO with the erratum, reclamation), :mod:`.coincidence` (many sources' outputs joined at their timestamps, exactly collected), :mod:`.oracle` (what any future sequence of operations can
still get, for tests), :mod:`.trace` (JSON Lines traces, ``sfdf gc``).
"""
