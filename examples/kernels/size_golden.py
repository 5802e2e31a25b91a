"""The golden of frame_size.v (docs/kernels.md, "Control messages"): what it computes, token by token."""


class FrameSize:
    """frame_size.v: every pixel is filtered and added to the frame's total; the frame end (a control message)
    is answered with the total, which then starts again from 0."""

    def __init__(self, IN=9, OUT=24):
        self.mask = (1 << OUT) - 1
        self.total = 0

    def step(self, inputs):
        value = inputs["i"]
        if value is not None:
            self.total = (self.total + value) & self.mask
        return {"o": None}

    def message(self, payload):
        total, self.total = self.total, 0
        return {"o": total}
