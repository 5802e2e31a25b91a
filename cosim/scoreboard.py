"""Token-by-token comparison of what each sink port received against the reference model.

A token is ``(index, payload, last)``: the computation index (``tuser``), the payload (``tdata``) and
``tlast``. The first token that differs fails at once, with the index, what was expected, what came,
and the tokens just before it; tokens still missing, or received beyond the expected list, are
reported by :meth:`Scoreboard.finish`.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

import cocotb
from cocotb.task import Task
from cocotb.triggers import Event

__all__ = ["Scoreboard", "ScoreboardError", "Token", "frame_beats"]

log = logging.getLogger(__name__)


class Token(NamedTuple):
    """One data token as a sink port shows it; a ``None`` field is not compared.

    Members
    -------
    index : int or None
        Computation index (``tuser``).
    payload : int
        ``tdata``.
    last : bool or None
        ``tlast``.
    """

    index: int | None
    payload: int
    last: bool | None = None

    @classmethod
    def of(cls, value) -> Token:
        """A token from a :class:`Token` or an ``(index, payload[, last])`` tuple."""
        if isinstance(value, Token):
            return value
        return cls(*value)

    def __str__(self) -> str:
        last = "-" if self.last is None else int(self.last)
        return f"(index={self.index}, payload={self.payload} = {self.payload:#x}, last={last})"


def frame_beats(frame, tlast: bool = True) -> list[tuple[int, int | None, bool | None]]:
    """The beats ``(tdata, tuser, tlast)`` of a cocotbext-axi ``AxiStreamFrame`` as its sink received it
    (``recv(compact=False)``, one word per beat: ``byte_lanes=1``), ``tuser`` per beat.

    A frame ends on the beat with ``tlast`` (``tlast=False``: the bus has none, every beat is a frame and
    ``tlast`` is ``None``); ``tuser`` is ``None`` when the bus has none.
    """
    words = list(frame.tdata)
    users = frame.tuser
    if not isinstance(users, list):  # one value for every beat (a compacted frame), or None
        users = [users] * len(words)
    elif len(users) != len(words):  # [] from a bus without tuser
        users = [None] * len(words)
    last = len(words) - 1
    return [(word, user, (n == last) if tlast else None) for n, (word, user) in enumerate(zip(words, users))]


class ScoreboardError(AssertionError):
    """A port received a token other than the expected one, or too few or too many tokens."""


@dataclass
class _Port:
    expected: list[Token] = field(default_factory=list)
    received: int = 0
    recent: deque = field(default_factory=deque)
    extra: list[Token] = field(default_factory=list)


class Scoreboard:
    """Compare, per sink port, the received token sequence with the expected one.

    Parameters
    ----------
    context : int
        How many matched tokens before a mismatch the message shows.
    name : str
        Prefix of messages and of the logger name.

    Examples
    --------
    >>> board = Scoreboard()
    >>> board.expect("m_axis_out", [(1, 10, False), (2, 20, True)])
    >>> board.check("m_axis_out", (1, 10, False))
    >>> board.done()
    False
    """

    def __init__(self, context: int = 4, name: str = "scoreboard"):
        if not isinstance(context, int) or context < 0:
            raise ValueError(f"Scoreboard context must be a non-negative integer, not {context!r}")
        self.context = context
        self.name = name
        self.log = logging.getLogger(f"{__name__}.{name}")
        self._ports: dict[str, _Port] = {}
        self._done: Event | None = None

    @property
    def ports(self) -> list[str]:
        """The ports that have expectations or received tokens."""
        return list(self._ports)

    def expect(self, port: str, tokens: Iterable) -> None:
        """Append ``tokens`` (see :meth:`Token.of`) to what ``port`` must receive, in order."""
        self._port(port).expected.extend(Token.of(token) for token in tokens)

    def check(self, port: str, got) -> None:
        """Compare one received token with the next expected one on ``port``.

        Raises
        ------
        ScoreboardError
            It differs; the message names the port, the token number, the index, both tokens and the
            tokens matched just before. A token beyond the expected list is only recorded, for
            :meth:`finish`.
        """
        state = self._port(port)
        token = Token.of(got)
        number = state.received
        state.received += 1
        if number >= len(state.expected):
            state.extra.append(token)
            self.log.warning("%s: extra token #%d %s (expected %d)", port, number, token, len(state.expected))
            return
        want = state.expected[number]
        fields = [name for name in Token._fields
                  if getattr(want, name) is not None and getattr(want, name) != getattr(token, name)]
        if fields:
            lines = [(f"{port}: token #{number} (index {want.index}) differs in {', '.join(fields)}: "
                      f"expected {want}, got {token}")]
            previous = list(state.recent)[-self.context:] if self.context else []
            if previous:
                lines.append(f"  previous {len(previous)} tokens (matched):")
                lines += [f"    #{n} {t}" for n, t in previous]
            else:
                lines.append("  (first token of the port)")
            raise ScoreboardError("\n".join(lines))
        state.recent.append((number, token))
        if self._done is not None and self.done():
            self._done.set()

    def attach(self, port: str, sink) -> Task:
        """Start a task that checks every beat of the frames a cocotbext-axi ``AxiStreamSink`` receives
        against ``port``'s expectations: ``tuser`` is the index (:func:`frame_beats`)."""

        async def pump() -> None:
            while True:
                for tdata, tuser, tlast in frame_beats(await sink.recv(compact=False), hasattr(sink.bus, "tlast")):
                    self.check(port, Token(tuser, tdata, tlast))

        return cocotb.start_soon(pump())

    def done(self, port: str | None = None) -> bool:
        """Every expected token of ``port`` (or of every port) has been received."""
        states = [self._port(port)] if port is not None else self._ports.values()
        return all(state.received >= len(state.expected) for state in states)

    async def wait(self) -> None:
        """Return once :meth:`done` is true for every port."""
        if self._done is None:
            self._done = Event()
        while not self.done():
            self._done.clear()
            await self._done.wait()

    def counts(self) -> dict[str, tuple[int, int]]:
        """``{port: (received, expected)}``."""
        return {port: (state.received, len(state.expected)) for port, state in self._ports.items()}

    def finish(self) -> None:
        """Check that every port received exactly its expected tokens.

        Raises
        ------
        ScoreboardError
            Lists, per port, how many tokens are missing (and the first of them) or extra (and the
            first few).
        """
        problems = []
        for port, state in self._ports.items():
            expected = len(state.expected)
            if state.received < expected:
                first = state.expected[state.received]
                problems.append(f"{port}: {expected - state.received} of {expected} expected tokens missing, "
                                f"first #{state.received} {first}")
            if state.extra:
                shown = ", ".join(f"#{expected + n} {token}"
                                  for n, token in enumerate(state.extra[:max(self.context, 1)]))
                problems.append(f"{port}: {len(state.extra)} extra tokens after the {expected} expected: "
                                f"{shown}")
        if problems:
            raise ScoreboardError("\n".join(problems))
        self.log.info("%s: %s", self.name, ", ".join(f"{port} {r}/{e} tokens" for port, (r, e) in
                                                     self.counts().items()))

    def _port(self, port: str) -> _Port:
        if port not in self._ports:
            self._ports[port] = _Port(recent=deque(maxlen=max(self.context, 1)))
        return self._ports[port]
