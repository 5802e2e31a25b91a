"""Serial-number arithmetic (RFC 1982) on ``width``-bit computation indices.

Indices in hardware wrap modulo ``2 ** width``. ``a`` precedes ``b`` iff ``(b - a) mod 2 ** width``
lies in ``(0, 2 ** (width - 1))``; this is the true order of the unwrapped indices whenever they are
less than ``2 ** (width - 1)`` apart, which the generator proves for every pair a node compares
(docs/semantics.md, "What sfdf check proves"). The join compares head indices relative to the node's
current index: with ``base``, :func:`serial_min_index` orders the offsets ``(index - base) mod
2 ** width`` as unsigned numbers, which is a total order on the window ``[base, base + 2 ** width)``.

Each hardware function has a pure-Python twin (``*_py``) used as the golden model in tests.
"""

from amaranth import Mux, Value

__all__ = [
    "serial_lt",
    "serial_lt_py",
    "serial_min",
    "serial_min_index",
    "serial_min_index_py",
    "serial_min_py",
]


def _check_width(width):
    if not isinstance(width, int) or isinstance(width, bool) or width < 1:
        raise TypeError(f"Serial number width must be a positive integer, not {width!r}")


def serial_lt(a, b, width):
    """``a < b`` in serial-number order on ``width`` bits (a 1-bit expression).

    Parameters
    ----------
    a, b : value-like
        Indices; only their ``width`` low bits count.
    width : int
        Index width ``w >= 1``.
    """
    _check_width(width)
    distance = (Value.cast(b) - Value.cast(a))[:width]
    return (distance != 0) & ~distance[width - 1]


def serial_lt_py(a, b, width):
    """Python twin of :func:`serial_lt`."""
    _check_width(width)
    distance = (b - a) % (1 << width)
    return 0 < distance < (1 << (width - 1))


def serial_min(a, b, width):
    """The serially lesser of ``a`` and ``b`` (``a`` when neither precedes the other)."""
    return Mux(serial_lt(b, a, width), Value.cast(b)[:width], Value.cast(a)[:width])


def serial_min_py(a, b, width):
    """Python twin of :func:`serial_min`."""
    return (b if serial_lt_py(b, a, width) else a) % (1 << width)


def _precedes(a, b, width, base):
    if base is None:
        return serial_lt(a, b, width)
    return (Value.cast(a) - base)[:width] < (Value.cast(b) - base)[:width]


def serial_min_index(indices, valids, width, *, base=None):
    """The least valid index: a balanced tree of ``len(indices) - 1`` comparators.

    Parameters
    ----------
    indices : sequence of value-like
        Candidate indices (``width`` low bits count).
    valids : sequence of value-like
        One bit per index; invalid candidates never win.
    width : int
        Index width ``w >= 1``.
    base : value-like, optional
        Compare offsets from ``base`` (for example the node's last computed index) as unsigned
        numbers instead of pairwise serial order.

    Returns
    -------
    tuple of (Value, Value)
        ``(index, valid)``: ``valid`` is high iff any candidate is; ``index`` is the least valid
        candidate (the earliest in the sequence among equals) and meaningless when ``valid`` is low.
    """
    _check_width(width)
    if len(indices) != len(valids) or not indices:
        raise ValueError(f"serial_min_index needs at least one index and one valid bit per index, "
                         f"not {len(indices)} indices and {len(valids)} valid bits")
    level = [(Value.cast(index)[:width], Value.cast(valid)[:1]) for index, valid in zip(indices, valids)]
    while len(level) > 1:
        paired = []
        for (a, a_valid), (b, b_valid) in zip(level[::2], level[1::2]):
            take_b = b_valid & (~a_valid | _precedes(b, a, width, base))
            paired.append((Mux(take_b, b, a), a_valid | b_valid))
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def serial_min_index_py(indices, valids, width, *, base=None):
    """Naive Python model of :func:`serial_min_index`: a left-to-right fold, ``(index, valid)``.

    Equal to the hardware tree whenever the order is consistent: always with ``base``, and without
    it when the valid indices are less than ``2 ** (width - 1)`` apart. ``index`` is ``None`` when
    no candidate is valid.
    """
    _check_width(width)
    mask = (1 << width) - 1
    least = None
    for index, valid in zip(indices, valids):
        if not valid:
            continue
        index &= mask
        if least is None:
            least = index
        elif base is None:
            least = serial_min_py(least, index, width)
        elif (index - base) & mask < (least - base) & mask:
            least = index
    return least, least is not None
