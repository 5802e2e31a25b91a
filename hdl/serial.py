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
    "serial_min_offset",
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
        numbers instead of pairwise serial order (:func:`serial_min_offset`).

    Returns
    -------
    tuple of (Value, Value)
        ``(index, valid)``: ``valid`` is high iff any candidate is; ``index`` is the least valid
        candidate (the earliest in the sequence among equals) and meaningless when ``valid`` is low.
    """
    if base is not None:
        index, _, valid = serial_min_offset(indices, valids, width, base=base)
        return index, valid
    (index,), valid = _min_tree([(Value.cast(index)[:width],) for index in indices], valids, width,
                                lambda b, a: serial_lt(b[0], a[0], width))
    return index, valid


def serial_min_offset(indices, valids, width, *, base):
    """The least valid index by its offset ``(index - base) mod 2 ** width``: ``(index, offset, valid)``.

    Every offset is computed once, side by side, and the tree compares offsets only, so the depth is
    one subtractor plus ``log2(len(indices))`` comparators. ``offset`` is the distance from ``base`` to
    the least index (a node's step from its previous computation, :class:`sfdf.hdl.node.SFDFNode`).
    """
    _check_width(width)
    pairs = [(Value.cast(index)[:width], (Value.cast(index) - base)[:width]) for index in indices]
    (index, offset), valid = _min_tree(pairs, valids, width, lambda b, a: b[1] < a[1])
    return index, offset, valid


def _min_tree(candidates, valids, width, precedes):
    """Balanced tree over tuples of values: ``(least candidate, any valid)``, earliest among equals."""
    _check_width(width)
    if len(candidates) != len(valids) or not candidates:
        raise ValueError(f"serial_min_index needs at least one index and one valid bit per index, "
                         f"not {len(candidates)} indices and {len(valids)} valid bits")
    level = [(tuple(candidate), Value.cast(valid)[:1]) for candidate, valid in zip(candidates, valids)]
    while len(level) > 1:
        paired = []
        for (a, a_valid), (b, b_valid) in zip(level[::2], level[1::2]):
            take_b = b_valid & (~a_valid | precedes(b, a))
            paired.append((tuple(Mux(take_b, y, x) for x, y in zip(a, b)), a_valid | b_valid))
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
