"""sfdf.hdl.serial: the hardware comparators against their Python twins, and the twins against plain ints."""

import itertools
import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from sfdf.hdl.serial import (
    serial_lt,
    serial_lt_py,
    serial_min,
    serial_min_index,
    serial_min_index_py,
    serial_min_py,
)


def _evaluate(width, inputs, build, cases):
    """Drive ``inputs`` (count of ``width``-bit signals) with each case; return ``build``'s outputs."""
    signals = [Signal(width, name=f"x{k}") for k in range(inputs)]
    outputs = build(*signals)
    m = Module()
    probes = [Signal(len(output), name=f"y{k}") for k, output in enumerate(outputs)]
    m.d.comb += [probe.eq(output) for probe, output in zip(probes, outputs)]
    results = []

    async def testbench(ctx):
        for case in cases:
            for signal, value in zip(signals, case):
                ctx.set(signal, value)
            results.append(tuple(ctx.get(probe) for probe in probes))

    sim = Simulator(m)
    sim.add_testbench(testbench)
    sim.run()
    return results


def check_serial_lt(width, pairs):
    results = _evaluate(width, 2, lambda a, b: [serial_lt(a, b, width), serial_min(a, b, width)], pairs)
    for (a, b), (lt, least) in zip(pairs, results):
        assert lt == serial_lt_py(a, b, width), f"serial_lt({a}, {b}) on {width} bits"
        assert least == serial_min_py(a, b, width), f"serial_min({a}, {b}) on {width} bits"


def _window_cases(rng, count, candidates, width, span):
    """Candidate indices within ``span`` of a random start (wrapping), with random valid bits."""
    cases = []
    for _ in range(count):
        start = rng.getrandbits(width)
        indices = [(start + rng.randrange(span)) % (1 << width) for _ in range(candidates)]
        valids = [rng.random() < 0.6 for _ in range(candidates)]
        cases.append((start, indices, valids))
    return cases


def check_serial_min_index(candidates, width, *, relative, seed):
    rng = random.Random(seed)
    # Without a base the order is only consistent within half the ring; with one, on all of it.
    span = (1 << width) if relative else (1 << (width - 1))
    cases = _window_cases(rng, 150, candidates, width, span)

    def build(*signals):
        base = signals[0] if relative else None
        indices = signals[1:1 + candidates]
        valids = signals[1 + candidates:]
        return serial_min_index(indices, [valid[0] for valid in valids], width, base=base)

    flat = [(start, *indices, *map(int, valids)) for start, indices, valids in cases]
    results = _evaluate(width, 1 + 2 * candidates, build, flat)
    for (start, indices, valids), (index, valid) in zip(cases, results):
        expected, expected_valid = serial_min_index_py(
            indices, valids, width, base=start if relative else None)
        assert valid == expected_valid
        if valid:
            assert index == expected, f"least of {indices} valid {valids} from {start}"


def test_serial_lt_exhaustive_width_4():
    check_serial_lt(4, list(itertools.product(range(16), repeat=2)))


def test_serial_lt_exhaustive_width_1():
    check_serial_lt(1, list(itertools.product(range(2), repeat=2)))


def test_serial_lt_random_width_32():
    rng = random.Random(32)
    half, full = 1 << 31, 1 << 32
    pairs = [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(400)]
    for a in (0, 1, half - 1, half, full - 1, rng.getrandbits(32)):
        for distance in (0, 1, half - 1, half, half + 1, full - 1):
            pairs.append((a, (a + distance) % full))
    check_serial_lt(32, pairs)


@pytest.mark.parametrize("width", [1, 2, 4, 8, 32])
def test_serial_lt_py_is_integer_order_within_half_ring(width):
    rng = random.Random(width)
    window = 1 << (width - 1)
    for _ in range(500):
        a = rng.randrange(1 << 40)
        b = a + rng.randrange(-window + 1, window)
        assert serial_lt_py(a % (1 << width), b % (1 << width), width) == (a < b)


def test_serial_lt_py_half_ring_is_incomparable():
    assert not serial_lt_py(0, 8, 4) and not serial_lt_py(8, 0, 4)


@pytest.mark.parametrize("candidates", [1, 2, 3, 5])
def test_serial_min_index_pairwise(candidates):
    check_serial_min_index(candidates, 8, relative=False, seed=candidates)


@pytest.mark.parametrize("candidates", [1, 2, 4, 7])
def test_serial_min_index_relative_to_base(candidates):
    check_serial_min_index(candidates, 8, relative=True, seed=10 + candidates)


def test_serial_min_index_relative_wide():
    check_serial_min_index(3, 32, relative=True, seed=32)


def test_serial_min_index_none_valid():
    assert serial_min_index_py([3, 4], [False, False], 4) == (None, False)


def test_serial_min_index_across_wrap():
    # 14, 15, 0, 1 on 4 bits: 14 is the least, both pairwise and relative to 13.
    assert serial_min_index_py([0, 15, 1, 14], [True] * 4, 4) == (14, True)
    assert serial_min_index_py([0, 15, 1, 14], [True] * 4, 4, base=13) == (14, True)


@pytest.mark.parametrize("width", [0, -1, 1.5, True, None])
def test_width_must_be_positive_integer(width):
    a, b = Signal(4), Signal(4)
    with pytest.raises(TypeError) as excinfo:
        serial_lt(a, b, width)
    assert str(excinfo.value) == f"Serial number width must be a positive integer, not {width!r}"


def test_min_index_needs_matching_candidates():
    with pytest.raises(ValueError) as excinfo:
        serial_min_index([Signal(4)], [], 4)
    assert str(excinfo.value) == (
        "serial_min_index needs at least one index and one valid bit per index, "
        "not 1 indices and 0 valid bits")
