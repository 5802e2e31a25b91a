"""The golden of pixel_trigger.v (examples/trigger.toml): what it computes, token by token."""


class Trigger:
    """pixel_trigger.v: every pixel is filtered; those above ``level`` are counted (up to ``2^OUT - 1``); the frame end
    (a control message) is answered with the count when it reaches ``pixels``, and with nothing otherwise."""

    def __init__(self, IN=16, OUT=16, level=1000, pixels=8):
        self.level, self.pixels, self.most = level, pixels, (1 << OUT) - 1
        self.count = 0

    def step(self, inputs):
        value = inputs["i"]
        if value is not None and value > self.level:
            self.count = min(self.count + 1, self.most)
        return {"o": None}

    def message(self, payload):
        count, self.count = self.count, 0
        return {"o": count if count >= self.pixels else None}
