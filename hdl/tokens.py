"""Token and message layouts on the channels of an edge (000 Fig. 2; docs/hardware.md)."""

from amaranth.lib import data

__all__ = [
    "CTRL_CREDIT",
    "CTRL_EOS",
    "CTRL_USER",
    "computation_layout",
    "control_layout",
    "counter_ahead_layout",
    "counter_control_layout",
    "counter_data_layout",
    "counter_heartbeat_layout",
    "data_layout",
    "head_layout",
    "heartbeat_layout",
    "inband_token_layout",
    "seq_width",
    "stamp_width",
]

#: Control message kinds. A credit message carries only credits; a user message may carry credits too
#: (000 Sec. 3: credits ride on any control message); EOS carries the final credits.
CTRL_CREDIT, CTRL_USER, CTRL_EOS = 0, 1, 2


def data_layout(index_width: int, data_width: int) -> data.StructLayout:
    """A data token: computation index and payload."""
    return data.StructLayout({"index": index_width, "data": data_width})


def control_layout(capacity: int, index_width: int, payload_width: int) -> data.StructLayout:
    """A control message: kind, credits (at most ``|q|``, 000 Thm. 3.2), and for a user message the
    index of the computation after which it was sent, whether that computation sent a token on the edge
    (``with_token``: the message goes with it, the last token its credits cover), and its payload
    (docs/hardware.md)."""
    return data.StructLayout({"kind": 2, "credits": range(capacity + 1), "index": index_width,
                              "with_token": 1, "payload": payload_width})


def stamp_width(capacity: int) -> int:
    """Bits of the data push/pop counts that place a control message among the tokens (live credit).

    A message's stamp (the tokens pushed before it) is at most ``|q|`` ahead of the receiver's pops (the
    tokens between are in ``q``), so counts of ``bits(|q| + 1)`` bits compare exactly modulo their width.
    """
    return (capacity + 1).bit_length()


def counter_control_layout(capacity: int, index_width: int, payload_width: int) -> data.StructLayout:
    """A control message with live credit (:mod:`sfdf.hdl.counter`): a user message or EOS, its
    ``stamp`` (the tokens pushed on the edge before it: its token too when ``with_token``), ``quiet``
    (no token was pushed since the previous message: its stamp equals that message's), the index of
    the computation after which it was sent and its payload. No credit messages: the stamp carries
    000's credits (docs/hardware.md, "Live credit")."""
    return data.StructLayout({"eos": 1, "stamp": stamp_width(capacity), "quiet": 1, "index": index_width,
                              "with_token": 1, "payload": payload_width})


def counter_data_layout(index_width: int, data_width: int) -> data.StructLayout:
    """A data token with live credit: :func:`data_layout` and ``msg``, set when a user message or EOS was
    sent with the token (the control message's ``with_token``), so the receiver knows it from the data
    head alone (:mod:`sfdf.hdl.counter`)."""
    return data.StructLayout({"index": index_width, "data": data_width, "msg": 1})


def counter_ahead_layout() -> data.StructLayout:
    """With live credit, what a receiver's ``due`` a cycle ahead reads of its edge's channels: whether the
    data and control channels will hold an item in the next cycle, and the next control head's ``quiet``
    (:class:`sfdf.hdl.counter.CounterReceiver`, docs/hardware.md, "Live credit")."""
    return data.StructLayout({"data_valid": 1, "ctrl_valid": 1, "ctrl_quiet": 1})


def counter_heartbeat_layout(index_width: int) -> data.StructLayout:
    """The heartbeat register with live credit: the latest dummy. It follows every item in the channels
    (a later push clears it, :mod:`sfdf.hdl.counter`), so it needs no count of what precedes it."""
    return data.StructLayout({"valid": 1, "index": index_width})


def seq_width(control_capacity: int) -> int:
    """Bits of the push/pop counters that order a heartbeat after the control messages before it.

    At most ``|q'|`` messages are outstanding, so counters of ``bits(|q'|) + 1`` bits never alias.
    """
    return control_capacity.bit_length() + 1


def heartbeat_layout(index_width: int, control_capacity: int) -> data.StructLayout:
    """The heartbeat register: the latest dummy (000 Alg. 4) and the control pushes before it."""
    return data.StructLayout({"valid": 1, "index": index_width, "seq": seq_width(control_capacity)})


def computation_layout(index_width: int, data_width: int, payload_width: int,
                       delta_width: int = 1) -> data.StructLayout:
    """What one computation asks of one output edge: maybe a token, maybe a message, or EOS.

    ``delta``: the distance from the node's previous computation index (the first computation's from
    0), saturated at ``2 ** delta_width - 1``; the senders' interval tests count with it
    (:mod:`sfdf.hdl.gap`).
    """
    return data.StructLayout({
        "index": index_width, "delta": delta_width, "emit": 1, "data": data_width, "msg_valid": 1,
        "msg": payload_width, "eos": 1,
    })


def head_layout(index_width: int, data_width: int, payload_width: int, *, dummy: bool = False) -> data.StructLayout:
    """What an input edge offers the join at one index: a data token, a user message, both (a message
    sent after the computation that emitted the token), a dummy index, or EOS (index infinity).
    With ``dummy`` (an in-band receiver's offer) a ``dummy`` field: the head is a dummy or carries a
    dummy flag (Propagation, 002 Alg. 2); a credit head has none, nor does the join read it."""
    fields = {"valid": 1, "index": index_width, "is_data": 1, "data": data_width, "is_msg": 1,
              "msg": payload_width, "eos": 1}
    return data.StructLayout({**fields, "dummy": 1} if dummy else fields)


def inband_token_layout(index_width: int, data_width: int, payload_width: int) -> data.StructLayout:
    """A token of an in-band channel (002 Alg. 2, 5; docs/semantics.md, "Inband mode").

    ``is_data``: a data token with payload ``data``; ``dummy``: a dummy with this index, alone or as the
    flag riding on the data token of its index (both set); ``eos``: end of stream. A user message rides
    on the token of its index (``msg_valid``, ``msg``). One token per index per channel.
    """
    return data.StructLayout({"index": index_width, "is_data": 1, "data": data_width, "dummy": 1, "eos": 1,
                              "msg_valid": 1, "msg": payload_width})
