"""8N1 UART receiver (with break detection) and transmitter: the physical layer of the board's host link.

The host speaks :mod:`sfdf.sw.device.codec`'s packets over it (:mod:`sfdf.boards.link`); a *break* (the line held low for
longer than a character, ``serial.Serial.send_break``) resets the network and the link, so a host can
always start from a known state (:mod:`sfdf.sw.device.uart`).
"""

from amaranth import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["MIN_DIVISOR", "UARTReceiver", "UARTTransmitter", "uart_divisor"]

#: Fewest clock cycles per bit: the receiver samples each bit in the middle, half a bit after the edge.
MIN_DIVISOR = 4
#: Largest baud error the link accepts: 8N1 tolerates about 5% between two ends, shared by both.
BAUD_TOLERANCE = 0.02


def uart_divisor(clk_hz: float, baud: int) -> int:
    """Clock cycles per bit for ``baud`` at ``clk_hz``; the rate must be reachable within 2%.

    Raises
    ------
    ValueError
        Fewer than :data:`MIN_DIVISOR` cycles per bit, or a baud error above :data:`BAUD_TOLERANCE`.
    """
    if not isinstance(baud, int) or isinstance(baud, bool) or baud < 1:
        raise ValueError(f"UART baud rate must be a positive integer, not {baud!r}")
    divisor = round(clk_hz / baud)
    if divisor < MIN_DIVISOR:
        raise ValueError(f"UART at {baud} baud needs a clock of at least {MIN_DIVISOR * baud / 1e6:g} MHz "
                         f"({MIN_DIVISOR} cycles per bit), not {clk_hz / 1e6:g} MHz")
    error = abs(clk_hz / divisor - baud) / baud
    if error > BAUD_TOLERANCE:
        raise ValueError(f"UART at {baud} baud from a {clk_hz / 1e6:g} MHz clock is {100 * error:.1f}% off "
                         f"(divisor {divisor}); choose a clock that is a near multiple of the baud rate")
    return divisor


def _check_divisor(divisor) -> int:
    """``divisor`` (clock cycles per bit) unless it is not an integer of at least :data:`MIN_DIVISOR`."""
    if not isinstance(divisor, int) or isinstance(divisor, bool) or divisor < MIN_DIVISOR:
        raise ValueError(f"UART divisor must be an integer >= {MIN_DIVISOR}, not {divisor!r}")
    return divisor


class UARTReceiver(wiring.Component):
    """8N1 receiver: a two-flip-flop synchroniser, start bit checked in its middle, bits sampled mid-bit.

    A character whose stop bit is low is a framing error; one that is also all zeros is a break, after
    which the receiver waits for the line to go high again (one break is one pulse however long).

    Parameters
    ----------
    divisor : int
        Clock cycles per bit (:func:`uart_divisor`).

    Members
    -------
    rx : In(1)
        The line (idle high).
    o_byte : Out(stream.Signature(8, always_ready=True))
        One valid cycle per character received (registered).
    o_framing_error : Out(1)
        A one-cycle pulse per character with a low stop bit (registered).
    o_break : Out(1)
        A one-cycle pulse per break (registered).
    """

    rx: In(1, init=1)
    o_byte: Out(stream.Signature(8, always_ready=True))
    o_framing_error: Out(1)
    o_break: Out(1)

    def __init__(self, divisor: int):
        self.divisor = _check_divisor(divisor)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        synced = Signal(2, init=0b11)
        m.d.sync += synced.eq(Cat(self.rx, synced[0]))
        line = synced[1]
        timer = Signal(range(self.divisor))
        bits = Signal(range(8))
        shift = Signal(8)

        with m.If(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        # the outputs are registered pulses, a cycle after the stop bit's sample: the parser's CRC and
        # the board's reset start at flip-flops, not at the timer's compare (``shift`` holds still for
        # a start bit's half at least, so the byte is current with its pulse)
        m.d.sync += [self.o_byte.valid.eq(0), self.o_framing_error.eq(0), self.o_break.eq(0)]
        with m.FSM():
            with m.State("IDLE"), m.If(~line):
                m.d.sync += timer.eq(self.divisor // 2 - 1)
                m.next = "START"
            with m.State("START"), m.If(timer == 0):
                m.d.sync += [timer.eq(self.divisor - 1), bits.eq(0)]
                m.next = "DATA"
                with m.If(line):  # a glitch, not a start bit
                    m.next = "IDLE"
            with m.State("DATA"), m.If(timer == 0):
                m.d.sync += [shift.eq(Cat(shift[1:], line)), bits.eq(bits + 1), timer.eq(self.divisor - 1)]
                with m.If(bits == 7):
                    m.next = "STOP"
            with m.State("STOP"), m.If(timer == 0):
                with m.If(line):
                    m.d.sync += self.o_byte.valid.eq(1)
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [self.o_framing_error.eq(1), self.o_break.eq(shift == 0)]
                    m.next = "WAIT_HIGH"
            with m.State("WAIT_HIGH"), m.If(line):
                m.next = "IDLE"
        m.d.comb += self.o_byte.payload.eq(shift)
        return m


class UARTTransmitter(wiring.Component):
    """8N1 transmitter with a registered line.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit (:func:`uart_divisor`).

    Members
    -------
    i_byte : In(stream.Signature(8))
        Characters to send; ``ready`` while the line is idle.
    tx : Out(1)
        The line (idle high).
    """

    i_byte: In(stream.Signature(8))
    tx: Out(1, init=1)

    def __init__(self, divisor: int):
        self.divisor = _check_divisor(divisor)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        timer = Signal(range(self.divisor))
        left = Signal(range(11))          # bit times still to finish: start, 8 data, stop
        shift = Signal(9, init=0x1FF)     # bits after the one on the line, stop bit last, ones behind

        idle = Signal(init=1)             # left == 0, as a register: the sender's handshake starts at a flip-flop
        m.d.comb += self.i_byte.ready.eq(idle)
        with m.If(idle), m.If(self.i_byte.valid):
            m.d.sync += [self.tx.eq(0), shift.eq(Cat(self.i_byte.payload, 1)), left.eq(10),
                         timer.eq(self.divisor - 1), idle.eq(0)]
        with m.Elif(timer == 0):
            m.d.sync += [self.tx.eq(shift[0]), shift.eq(Cat(shift[1:], 1)), left.eq(left - 1),
                         timer.eq(self.divisor - 1), idle.eq(left <= 1)]
        with m.Else():
            m.d.sync += timer.eq(timer - 1)
        return m
