"""Node kernels for the reference model: every kernel is its golden behind the contract (docs/kernels.md).

:class:`GoldenKernel` adapts a golden (``step(inputs) -> outputs``, dicts keyed by port,
:mod:`sfdf.gen.contract`) to what the model's nodes call, and checks what the golden returns: a value or
``None`` for every output, within the output's width. The built-in kernels' goldens are
:mod:`sfdf.gen.goldens`'s, the user's are loaded from the spec's folder; :func:`make_kernel` builds either.

The interface the nodes call (duck-typed, kept minimal for speed):

- ``compute(index, values, last) -> (values, emits)``: called on *data* computations only (null
  computations never reach the kernel) with each input's value in spec order (``None`` where absent);
  returns a value per output (out-edges in spec order, or the single ``m_axis`` of a sink) and whether
  it gets a data token. ``last`` says the word ends a frame: a source computation after which the source
  sends a frame end (always False elsewhere).
- ``control(port, message) -> list``: a user control message delivered on input ``port``; returns the
  messages to send on every output after the current computation.
- ``finish() -> list``: messages still owed at EOS.
- ``messages``: the kernel takes control messages as beats (``messages = true``), and then
  ``answer(index, message) -> list``: a value or ``None`` per output, the result riding on the message
  the node forwards after computation ``index`` (docs/kernels.md).
"""

from __future__ import annotations

from sfdf.gen.contract import (
    KernelPorts,
    UserKernel,
    kernel_features,
    kernel_ports,
    load_golden_class,
    make_golden,
    may_filter,
)
from sfdf.gen.errors import SpecError, UserError
from sfdf.gen.goldens import unpack_variance
from sfdf.gen.kernels import BUILTIN, MESSAGE_WIDTH, kernel_params

__all__ = ["GoldenError", "GoldenKernel", "make_kernel", "unpack_variance"]


class GoldenError(UserError, ValueError):
    """A golden raised, or returned something the contract does not allow: names the node and the computation."""


class _ControlBarrier:
    """Forward a user message once it has arrived on every input (a join aligns control).

    With one input this forwards every message at once (the rule of docs/semantics.md). With
    several, forwarding the copy of a message that arrives first would put it ahead of data of the
    same frame still travelling on a slower branch (precise ordering, 000 Thm. 3.1, only holds per
    edge); waiting for the last copy keeps it after all such data and before any later index, and
    sends it once. Copies are matched by value. In-band, the copies a source's message makes at a
    fork ride on the same index down every path, so they are delivered in one computation and the
    last of them releases the message there; in credit mode they arrive whenever their control
    channels are read.
    """

    __slots__ = ("inputs", "messages", "waiting")

    def __init__(self, inputs: int):
        self.inputs = inputs
        self.waiting: dict = {}
        self.messages = False

    def control(self, port: int, message) -> list:
        if self.inputs <= 1:
            return [message]
        seen = self.waiting.get(message, 0) + 1
        if seen < self.inputs:
            self.waiting[message] = seen
            return []
        del self.waiting[message]
        return [message]

    def finish(self) -> list:
        """Messages some input never delivered (sources with different frames): owed before EOS."""
        owed = list(self.waiting)
        self.waiting.clear()
        return owed


class GoldenKernel(_ControlBarrier):
    """A node's golden behind the model's kernel interface (module docstring).

    Parameters
    ----------
    golden : object
        ``step(inputs[, index][, last=...]) -> outputs`` (:mod:`sfdf.gen.contract`).
    ports : KernelPorts
    index, last, messages : bool
        The golden takes the computation's index; the word's ``last`` (a source); control messages
        (``message(payload) -> outputs``).
    may_filter : bool
        ``False``: the node promises a token on every output at every computation, so a ``None`` is an error.
    node, file : str
        The node and the spec file, for errors.
    """

    __slots__ = ("call", "file", "golden", "masks", "may_filter", "names", "node", "outputs")

    def __init__(self, golden, ports: KernelPorts, *, index: bool = False, last: bool = False, messages: bool = False,
                 may_filter: bool = True, node: str = "", file: str = "<memory>"):
        super().__init__(len(ports.edges_in))
        self.golden, self.messages = golden, messages
        self.may_filter = may_filter
        self.names = ports.input_names
        self.outputs = ports.output_names
        self.masks = [(1 << width) - 1 for _, width in ports.outputs]
        self.node, self.file = node, file
        step = golden.step
        if index and last:
            self.call = lambda inputs, i, flag: step(inputs, i, last=flag)
        elif index:
            self.call = lambda inputs, i, flag: step(inputs, i)
        elif last:
            self.call = lambda inputs, i, flag: step(inputs, last=flag)
        else:
            self.call = lambda inputs, i, flag: step(inputs)

    def compute(self, index: int, values, last: bool) -> tuple[list, list[bool]]:
        try:
            result = self.call(dict(zip(self.names, values)), index, last)
        except Exception as exc:  # noqa: BLE001 (the golden's own failure, named where it happened)
            raise self._error(index, f"raised {type(exc).__name__}: {exc}", "fix the golden") from None
        return self._outputs(result, index, self.may_filter)

    def answer(self, index: int, message) -> list:
        """The golden's ``message(payload)``: per output the result riding on the message (``None``: none). A
        frame end's payload is the frame number modulo ``2^MESSAGE_WIDTH``, as the hardware's ``i_mdata``."""
        payload = message_payload(message)
        try:
            result = self.golden.message(payload)
        except Exception as exc:  # noqa: BLE001 (the golden's own failure, named where it happened)
            raise self._error(index, f"message({payload}) raised {type(exc).__name__}: {exc}", "fix the golden") from None
        out, emits = self._outputs(result, index, True, f"message({payload}) ")
        return [value if emit else None for value, emit in zip(out, emits)]

    def twice(self, index: int, output: int, message) -> GoldenError:
        """The error of a result answering ``message`` on an output the computation it follows emitted on."""
        return self._error(index, f"message({message_payload(message)}) returned a result for output "
                           f"{self.outputs[output]!r}, "
                           "which this computation already emitted on (one token per index per output)",
                           "emit the frame's result on the message only where the computation filtered")

    def unplaced(self, index: int, output: int, message) -> GoldenError:
        """The error of a result answering ``message`` where it follows no computation: no index is left for it."""
        return self._error(index, f"message({message_payload(message)}) returned a result for output "
                           f"{self.outputs[output]!r} on a message that follows no computation (at the end of the "
                           "stream): no index is left for it", "return None for a message that ends the stream")

    def _outputs(self, result, index: int, may_filter: bool, what: str = "") -> tuple[list, list[bool]]:
        """``(values, emits)`` of a golden's ``result``, checked: a dict with a value or ``None`` per output."""
        if not isinstance(result, dict):
            raise self._error(index, f"{what}returned {type(result).__name__}, not a dict of outputs",
                              f"return {{{', '.join(repr(n) + ': value or None' for n in self.outputs)}}}")
        out, emits = [], []
        for name, mask in zip(self.outputs, self.masks):
            if name not in result:
                raise self._error(index, f"{what}returned no output {name!r}", f"return a value or None for {name!r}")
            value = result[name]
            if value is None:
                if not may_filter:
                    raise self._error(index, f"filtered output {name!r}, and the node declares may_filter = false",
                                      "return a value for every output, or declare may_filter = true")
                out.append(0)
                emits.append(False)
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= mask:
                raise self._error(index, f"{what}returned {value!r} for output {name!r}, not an integer of "
                                  f"{mask.bit_length()} bits", "return values that fit the output's width")
            out.append(value)
            emits.append(True)
        return out, emits

    def _error(self, index: int, problem: str, fix: str) -> GoldenError:
        return GoldenError(self.file, f'node "{self.node}".kernel.golden', f"at computation {index}: {problem}", fix)


def message_payload(message) -> int:
    """What a kernel taking messages gets of a user message: a frame end ``(FRAME_END, k)``'s frame number
    ``k`` modulo ``2^MESSAGE_WIDTH`` (the hardware's ``i_mdata``); any other message as it is."""
    if isinstance(message, tuple) and len(message) == 2 and isinstance(message[1], int):
        return message[1] & ((1 << MESSAGE_WIDTH) - 1)
    return message


def make_kernel(network, name: str) -> GoldenKernel:
    """The reference model's kernel of node ``name`` in ``network``: its golden (built-in or the user's)
    with the node's ports.

    Raises
    ------
    SpecError
        The user's golden cannot be imported, or refused the node's parameters.
    """
    node = network.node_by_name[name]
    ports = kernel_ports(network, name)
    if isinstance(node.kernel, UserKernel):
        golden_class = load_golden_class(node.kernel, network.source, name)
        params = node.params
    else:
        golden_class = _builtin_golden(node.kernel)
        params = kernel_params(node.kernel, node.params)
    features = kernel_features(node)
    if features["messages"] and not callable(getattr(golden_class, "message", None)):
        raise SpecError(network.source, f'node "{name}".kernel.golden',
                        f"{golden_class.__name__} has no method message(payload), and the node declares messages = true",
                        "add message(self, payload) returning a value or None per output (docs/kernels.md)")
    golden = make_golden(golden_class, params, ports, network.source, name)
    return GoldenKernel(golden, ports, index=features["index"], last=features["last"], messages=features["messages"],
                        may_filter=may_filter(node), node=name, file=network.source)


def _builtin_golden(kernel) -> type:
    """The class of a built-in kernel's golden (:data:`sfdf.gen.kernels.BUILTIN`), named as a user's is."""
    import importlib

    module, _, attribute = BUILTIN[kernel or "random_filter"].golden.partition(":")
    return getattr(importlib.import_module(module), attribute)
