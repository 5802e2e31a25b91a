"""The goldens of the hillas network's kernels (docs/kernels.md): what zsup.v, moments.py and hillas_join.v compute,
token by token, in Python. The reference model calls them; the cosim, the fast device and the Spark job
check the hardware against it."""


class ZeroSuppress:
    """zsup.v: ``{last, min(pixel, 255)}`` on both outputs when at least ``LEVEL``; a last word below it goes
    with amplitude 0; every other pixel is filtered."""

    def __init__(self, LEVEL=16):
        self.level = LEVEL

    def step(self, inputs, last):
        amplitude = min(inputs["i"], 255)
        bright = amplitude >= self.level
        value = last << 8 | (amplitude if bright else 0) if last or bright else None
        return {"zs_mom": value, "zs_hil": value}


class Moments:
    """moments.py: ``{Sy, Sx, S}`` of the frame's pixels at the word marked last, places from the index."""

    def __init__(self, INDEX_WIDTH=32):
        self.mask = (1 << INDEX_WIDTH) - 1
        self.previous = 0
        self.sums = [0, 0, 0]

    def step(self, inputs, index):
        word = inputs["i"]
        amplitude, last = word & 0xFF, word >> 8
        place = (index - self.previous - 1) & 0x3F
        for k, term in enumerate((amplitude, amplitude * (place & 7), amplitude * (place >> 3))):
            self.sums[k] = (self.sums[k] + term) & ((1 << (14 if k == 0 else 17)) - 1)
        if not last:
            return {"o": None}
        self.previous = index
        s, sx, sy = self.sums
        self.sums = [0, 0, 0]
        return {"o": sy << 31 | sx << 14 | s}


class HillasJoin:
    """hillas_join.v: at the word marked last ``{peak, npix, Sy, Sx, S}``, counting the pixels of at least ``LEVEL``."""

    def __init__(self, LEVEL=16):
        self.level = LEVEL
        self.npix = self.peak = 0

    def step(self, inputs):
        pixel, moments = inputs["zs_hil"], inputs["mom_hil"]
        last = pixel is not None and pixel >> 8
        if pixel is not None and pixel & 0xFF >= self.level:
            self.npix = (self.npix + 1) & 0x7F
            self.peak = max(self.peak, pixel & 0xFF)
        result = self.peak << 55 | self.npix << 48 | (moments or 0)
        if last:
            self.npix = self.peak = 0
        return {"o": result if last else None}


def hillas_parameters(result):
    """``(size, npix, peak, x, y)`` of a result word: the frame's total amplitude, pixels above the level,
    largest amplitude and centroid (``nan`` for an empty frame)."""
    s, sx, sy = result & 0x3FFF, result >> 14 & 0x1FFFF, result >> 31 & 0x1FFFF
    npix, peak = result >> 48 & 0x7F, result >> 55 & 0xFF
    return s, npix, peak, sx / s if s else float("nan"), sy / s if s else float("nan")
