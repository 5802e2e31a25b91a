"""Live credit's token counts as maximal-length LFSRs (:mod:`sfdf.hdl.counter`).

A live-credit edge counts tokens twice: the sender the tokens it pushed (each message's *stamp*), the
receiver the tokens it popped, and the receiver only ever asks whether two counts are *equal* (000's
credits by counter, docs/hardware.md "Live credit"). Equality needs no binary order, only a sequence
of distinct states at least ``|q| + 1`` long (a stamp is at most ``|q|`` tokens ahead of the pops). A
Fibonacci LFSR of ``w = bits(|q| + 1)`` bits with a primitive feedback polynomial steps through all
``2 ** w - 1`` non-zero states (``>= |q| + 1``): its step is a shift and one XOR of two or four taps
(one LUT4), where a ``w``-bit binary increment is a ``w``-bit carry chain. So the counts compare
exactly as binary counts modulo ``2 ** w - 1`` would.

Taps: Xilinx XAPP052 (Alfke, "Efficient Shift Registers, LFSR Counters, and Long Pseudo-Random Sequence
Generators", table 3), for the widths a capacity of at most ``2 ** 16`` tokens needs;
``tests/test_hdl_stamps.py`` steps each one through its whole period.
"""

from amaranth.hdl import Cat

__all__ = ["STAMP_SEED", "stamp_sequence", "stamp_step", "stamp_step_value"]

#: Width -> taps (1-based bit numbers, XAPP052 table 3), for stamp widths 2..17 (capacity <= 2^16).
_TAPS = {2: (2, 1), 3: (3, 2), 4: (4, 3), 5: (5, 3), 6: (6, 5), 7: (7, 6), 8: (8, 6, 5, 4), 9: (9, 5),
         10: (10, 7), 11: (11, 9), 12: (12, 6, 4, 1), 13: (13, 4, 3, 1), 14: (14, 5, 3, 1), 15: (15, 14),
         16: (16, 15, 13, 4), 17: (17, 14)}

#: The counts' state before the first token (an LFSR never leaves the non-zero states).
STAMP_SEED = 1


def _taps(width: int) -> tuple:
    if width not in _TAPS:
        raise ValueError(f"Stamp width must be 2..17 bits (a capacity of at most 2^16 tokens), not {width}")
    return _TAPS[width]


def stamp_step(value):
    """The count after one more token, as an expression: ``value`` shifted up, the taps' XOR in bit 0."""
    feedback = value[_taps(len(value))[0] - 1]
    for tap in _taps(len(value))[1:]:
        feedback = feedback ^ value[tap - 1]
    return Cat(feedback, value[:-1])


def stamp_step_value(value: int, width: int) -> int:
    """:func:`stamp_step` on an integer."""
    feedback = 0
    for tap in _taps(width):
        feedback ^= (value >> (tap - 1)) & 1
    return ((value << 1) | feedback) & ((1 << width) - 1)


def stamp_sequence(width: int) -> list[int]:
    """The states from :data:`STAMP_SEED` in order, one period (``2 ** width - 1`` states): the state after
    ``n`` tokens is ``stamp_sequence(width)[n % (2 ** width - 1)]``."""
    states, state = [], STAMP_SEED
    for _ in range((1 << width) - 1):
        states.append(state)
        state = stamp_step_value(state, width)
    return states
