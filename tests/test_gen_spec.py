"""sfdf.gen.spec: the TOML spec format of docs/architecture.md and its one-line errors (whole messages pinned)."""

import itertools
import pickle
import textwrap

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from sfdf.gen.errors import SpecError, UserError
from sfdf.gen.kernels import KERNELS
from sfdf.gen.spec import load_spec, parse_spec

# Line 1 [network], 4 and 7 [[node]], 10 [[edge]], 13 capacity; appended edge keys start at line 14.
BASE = """\
[network]
name = "n"

[[node]]
name = "u"

[[node]]
name = "v"

[[edge]]
from = "u"
to = "v"
capacity = 4
"""


def with_network(extra: str) -> str:
    """BASE with ``extra`` from line 3, inside [network]."""
    return BASE.replace('name = "n"\n', f'name = "n"\n{extra}\n', 1)


def with_node(extra: str) -> str:
    """BASE with ``extra`` from line 6, inside node "u"."""
    return BASE.replace('name = "u"\n', f'name = "u"\n{extra}\n', 1)


def with_edge(extra: str) -> str:
    """BASE with ``extra`` from line 14, inside edge[0]."""
    return BASE + extra + "\n"


def check(text: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(textwrap.dedent(text), "t.toml")
    assert str(info.value) == message


def check_edge(extra: str, message: str) -> None:
    check(with_edge(extra), message)


def check_node(extra: str, message: str) -> None:
    check(with_node(extra), message)


def check_network(extra: str, message: str) -> None:
    check(with_network(extra), message)


EDGE_KEYS = "name, from, to, capacity, control_capacity, output_buffer, interval, threshold, width, push, pop, peek, initial"
KERNEL_LIST = '"random_filter", "variance_source", "variance_mean", "variance_mean_sq", "variance_join"'
IDENT = "use letters, digits and underscores, not starting with a digit"
AUTO_FIX = 'use "auto" to let sfdf choose'


# -- SpecError ------------------------------------------------------------------------------------------

def test_error_with_line():
    assert str(SpecError("a.toml", "edge[3].threshold", "bad", "fix it", 7)) == "a.toml:7: edge[3].threshold: bad; fix it"


def test_error_without_line():
    assert str(SpecError("a.toml", 'edge "uv".threshold', "bad", "fix it")) == 'a.toml: edge "uv".threshold: bad; fix it'


def test_error_members_and_pickle():
    error = pickle.loads(pickle.dumps(SpecError("a.toml", "f", "bad", "fix", 3)))
    assert (error.file, error.field, error.problem, error.fix, error.line) == ("a.toml", "f", "bad", "fix", 3)
    assert isinstance(error, UserError) and isinstance(error, ValueError)


# -- TOML syntax ----------------------------------------------------------------------------------------

def test_bad_toml():
    check_edge("width = ", "t.toml:14: TOML: invalid syntax: Invalid value at column 9; fix the TOML syntax (see toml.io)")


def test_toml_duplicate_key():
    check_edge("capacity = 5", "t.toml:14: TOML: invalid syntax: Cannot overwrite a value at column 13; "
               "fix the TOML syntax (see toml.io)")


def test_toml_unterminated_table():
    check("[network", "t.toml:1: TOML: invalid syntax: Expected ']' at the end of a table declaration at the end of the file; "
          "fix the TOML syntax (see toml.io)")


# -- top level and [network] ------------------------------------------------------------------------------

def test_unknown_top_level_key():
    check(BASE + "[nodes]\n", "t.toml:14: nodes: unknown key; did you mean node? use one of: network, node, edge, message")


def test_missing_network():
    check(BASE[BASE.index("[[node]]"):],
          't.toml: network: missing table; add a [network] table with name = "<identifier>"')


def test_network_not_a_table():
    check("network = 3\n" + BASE[BASE.index("[[node]]"):],
          "t.toml:1: network: must be a table, not 3; write it as a [network] table")


def test_missing_network_name():
    check(BASE.replace('name = "n"\n', ""), 't.toml:1: network.name: missing; add name = "<identifier>"')


def test_network_name_not_identifier():
    check(BASE.replace('"n"', '"my net"'), f't.toml:2: network.name: "my net" is not an identifier; {IDENT}')


def test_network_name_not_string():
    check(BASE.replace('"n"', "3"), f"t.toml:2: network.name: must be a string, not 3; {IDENT}")


def test_network_unknown_key():
    check_network("mod = 1", "t.toml:3: network.mod: unknown key; did you mean mode? use one of: "
                  "name, mode, dummy_algorithm, filtering, live_credit, data_width, index_width")


def test_unknown_mode():
    check_network('mode = "credits"', 't.toml:3: network.mode: unknown mode "credits"; use "credit" or "inband"')


def test_mode_not_string():
    check_network("mode = 1", 't.toml:3: network.mode: must be a string, not 1; use "credit" or "inband"')


def test_unknown_dummy_algorithm():
    check_network('dummy_algorithm = "heartbeat"', 't.toml:3: network.dummy_algorithm: unknown dummy algorithm '
                  '"heartbeat"; use "naive", "propagation" or "nonpropagation"')


def test_filtering_not_bool():
    check_network("filtering = 1", "t.toml:3: network.filtering: must be true or false, not 1; "
                  "use true (nodes may filter) or false (no node ever filters)")


def test_live_credit_not_bool():
    check_network("live_credit = 0", "t.toml:3: network.live_credit: must be true or false, not 0; "
                  "use true (take uncredited tokens at once) or false (000's receiver: only against credit)")


def test_live_credit_is_for_credit_mode():
    check_network('mode = "inband"\nlive_credit = true',
                  't.toml:4: network.live_credit: applies to credit mode only; remove live_credit, or set '
                  'mode = "credit"')


def test_live_credit_off():
    assert parse_spec(with_network("live_credit = false")).live_credit is False


def test_data_width_zero():
    check_network("data_width = 0", "t.toml:3: network.data_width: must be an integer in 1..64, not 0; "
                  "use a payload width of 1 to 64 bits")


def test_data_width_too_wide():
    check_network("data_width = 65", "t.toml:3: network.data_width: must be an integer in 1..64, not 65; "
                  "use a payload width of 1 to 64 bits")


def test_data_width_bool():
    check_network("data_width = true", "t.toml:3: network.data_width: must be an integer in 1..64, "
                  "not true (a boolean); use a payload width of 1 to 64 bits")


def test_index_width_one():
    check_network("index_width = 1", "t.toml:3: network.index_width: must be an integer in 2..64, not 1; "
                  "use an index width of 2 to 64 bits")


def test_index_width_too_wide():
    check_network("index_width = 65", "t.toml:3: network.index_width: must be an integer in 2..64, not 65; "
                  "use an index width of 2 to 64 bits")


# -- [[node]] -------------------------------------------------------------------------------------------

def test_no_nodes():
    check('[network]\nname = "n"\n', 't.toml: node: the network has no nodes; add a [[node]] table for each node')


def test_empty_node_array():
    check('node = []\n[network]\nname = "n"\n',
          "t.toml: node: the network has no nodes; add a [[node]] table for each node")


def test_node_table_not_array():
    check('[network]\nname = "n"\n[node]\nname = "u"\n',
          "t.toml:3: node: must be an array of tables, not a table; write each node as a [[node]] table")


def test_node_missing_name():
    check(BASE.replace('name = "v"\n', 'ii = 1\n'), 't.toml:7: node[1].name: missing; add name = "<identifier>"')


def test_node_name_not_identifier():
    check(BASE.replace('"v"', '"1v"'), f't.toml:8: node[1].name: "1v" is not an identifier; {IDENT}')


def test_node_name_with_dash():
    check(BASE.replace('"v"', '"v-1"'), f't.toml:8: node[1].name: "v-1" is not an identifier; {IDENT}')


def test_duplicate_node():
    check(BASE.replace('"v"', '"u"', 1), 't.toml:8: node[1].name: duplicate name "u" (also node[0]); '
          "give every node a unique name")


def test_node_unknown_key():
    check_node('kernal = "random_filter"', 't.toml:6: node "u".kernal: unknown key; did you mean kernel? '
               "use one of: name, kernel, params, ii, control_messages, registered_offers, pipelined, latency, "
               "may_filter, index, last, messages")


def test_unknown_kernel():
    check_node('kernel = "random_filtr"', 't.toml:6: node "u".kernel: unknown kernel "random_filtr"; '
               f'did you mean "random_filter"? use one of: {KERNEL_LIST}')


def test_unknown_kernel_far():
    check_node('kernel = "fft"', f't.toml:6: node "u".kernel: unknown kernel "fft"; use one of: {KERNEL_LIST}')


def test_kernel_not_string():
    check_node("kernel = 1", f't.toml:6: node "u".kernel: must be a string, not 1; use one of: {KERNEL_LIST}')


def test_unknown_kernel_parameter():
    check_node('kernel = "random_filter"\nparams = { rat = 0.5 }', 't.toml:7: node "u".params.rat: unknown parameter '
               'of kernel "random_filter"; did you mean rate? use one of: rate, seed')


def test_parameter_of_kernel_without_parameters():
    check_node('kernel = "variance_mean"\nparams = { rate = 0.5 }', 't.toml:7: node "u".params.rate: unknown '
               'parameter of kernel "variance_mean"; this kernel takes no parameters: remove it')


def test_params_without_kernel():
    check_node("params = { rate = 0.5 }", 't.toml:6: node "u".params: parameters need a kernel; '
               'add kernel = "random_filter" or remove params')


def test_params_not_table():
    check_node('kernel = "random_filter"\nparams = 0.5', 't.toml:7: node "u".params: must be a table, not 0.5; '
               "write params = { name = value, ... }")


def test_rate_above_one():
    check_node('kernel = "random_filter"\nparams = { rate = 1.5 }', 't.toml:7: node "u".params.rate: must be a '
               "number in [0, 1], not 1.5; use the probability that each output filters a token")


def test_rate_negative():
    check_node('kernel = "random_filter"\nparams = { rate = -0.1 }', 't.toml:7: node "u".params.rate: must be a '
               "number in [0, 1], not -0.1; use the probability that each output filters a token")


def test_rate_bool():
    check_node('kernel = "random_filter"\nparams = { rate = true }', 't.toml:7: node "u".params.rate: must be a '
               "number in [0, 1], not true (a boolean); use the probability that each output filters a token")


def test_rate_string():
    check_node('kernel = "random_filter"\nparams = { rate = "0.5" }', 't.toml:7: node "u".params.rate: must be a '
               'number in [0, 1], not "0.5"; use the probability that each output filters a token')


def test_seed_negative():
    check_node('kernel = "random_filter"\nparams = { seed = -1 }', 't.toml:7: node "u".params.seed: must be an '
               "integer in 0..4294967295, not -1; use a 32-bit LFSR seed")


def test_seed_float():
    check_node('kernel = "random_filter"\nparams = { seed = 1.0 }', 't.toml:7: node "u".params.seed: must be an '
               "integer in 0..4294967295, not 1.0; use a 32-bit LFSR seed")


def test_params_subtable_line():
    check(BASE.replace('name = "v"\n', 'name = "v"\nkernel = "random_filter"\n[node.params]\nseed = -1\n'),
          't.toml:11: node "v".params.seed: must be an integer in 0..4294967295, not -1; use a 32-bit LFSR seed')


def test_params_dotted_key_line():
    check_node('kernel = "random_filter"\nparams.seed = -1', 't.toml:7: node "u".params.seed: must be an '
               "integer in 0..4294967295, not -1; use a 32-bit LFSR seed")


def test_ii_zero():
    check_node("ii = 0", 't.toml:6: node "u".ii: must be an integer in 1..65536, not 0; '
               "use the cycles per computation")


def test_ii_bool():
    check_node("ii = true", 't.toml:6: node "u".ii: must be an integer in 1..65536, not true (a boolean); '
               "use the cycles per computation")


def test_control_messages_negative():
    check_node("control_messages = -1", 't.toml:6: node "u".control_messages: must be an integer in 0..65536 or '
               '"unbounded", not -1; use the most user control messages per data token, or "unbounded"')


def test_control_messages_word():
    check_node('control_messages = "many"', 't.toml:6: node "u".control_messages: must be an integer in 0..65536 or '
               '"unbounded", not "many"; use the most user control messages per data token, or "unbounded"')


def test_registered_offers():
    spec = BASE.replace('name = "v"\n', 'name = "v"\nregistered_offers = false\n', 1)
    assert [n.registered_offers for n in parse_spec(spec, "t.toml").nodes] == [True, False]  # the default: True
    check_node("registered_offers = 1", 't.toml:6: node "u".registered_offers: must be true or false, not 1; use true '
               "(offers from registers: a cycle per hop, for the clock) or false (a cycle less per hop into this "
               "node, at a slower clock)")
    check_node("registered_offers = false", 't.toml:6: node "u".registered_offers: a node without inputs has no '
               "offers to register; remove registered_offers")


CHAIN3 = """\
[network]
name = "n"
mode = "credit"

[[node]]
name = "u"

[[node]]
name = "v"
{v}
[[node]]
name = "x"

[[edge]]
from = "u"
to = "v"
capacity = 4

[[edge]]
from = "v"
to = "x"
capacity = 4
"""


def test_pipelined():
    """``pipelined = false``: a single-stage node, where one can be built (docs/hardware.md)."""
    spec = CHAIN3.format(v="pipelined = false\n")
    assert [n.pipelined for n in parse_spec(spec, "t.toml").nodes] == ["auto", False, "auto"]  # the default: auto
    assert parse_spec(CHAIN3.format(v='pipelined = "auto"\n'), "t.toml").nodes[1].pipelined == "auto"
    check(CHAIN3.format(v="pipelined = 0\n"), 't.toml:10: node "v".pipelined: must be "auto", true or false, not 0; '
          'use "auto" (single-stage where a reconvergent path runs faster so), true (two stages: three cycles per '
          "hop, for the clock) or false (one input and one output: decide and send in one cycle, a hop of one "
          "cycle at a slower clock)")
    # "auto" and true are accepted where a single-stage node cannot be built
    assert parse_spec(CHAIN3.replace('name = "u"\n', 'name = "u"\npipelined = true\n', 1).format(v=""), "t.toml")
    check(CHAIN3.replace('name = "u"\n', 'name = "u"\npipelined = false\n', 1).format(v=""),
          't.toml:7: node "u".pipelined: a single-stage node has one input and one output, not 0 and 1; '
          "remove pipelined")
    check(CHAIN3.format(v="pipelined = false\nii = 2\n"), 't.toml:10: node "v".pipelined: a single-stage node '
          "computes every cycle, not every 2; remove pipelined, or ii")
    check(CHAIN3.replace('name = "u"\n', 'name = "u"\nkernel = "variance_source"\n', 1).format(
          v='pipelined = false\nkernel = "variance_mean"\n'), 't.toml:11: node "v".pipelined: kernel '
          "variance_mean has pipeline stages, which a single-stage node has not; remove pipelined")
    check(CHAIN3.format(v="pipelined = false\nregistered_offers = true\n"), 't.toml:10: node "v".pipelined: a '
          "single-stage node has no offer registers to set; remove registered_offers")
    check(CHAIN3.replace('mode = "credit"', 'mode = "inband"').format(v="pipelined = false\n"),
          't.toml:10: node "v".pipelined: a single-stage node speaks live credit only; remove pipelined, or set '
          'mode = "credit" with live credit')
    check(CHAIN3.replace('mode = "credit"', 'mode = "credit"\nlive_credit = false').format(v="pipelined = false\n"),
          't.toml:11: node "v".pipelined: a single-stage node speaks live credit only; remove pipelined, or set '
          'mode = "credit" with live credit')


def test_staged_kernels_are_the_hardware_kernels_with_latency():
    """gen's built-ins that a single-stage node refuses are hdl's: the kernels of latency above 0."""
    from sfdf.gen.kernels import BUILTIN
    from sfdf.hdl.kernels import kernel_latency

    assert {k for k, b in BUILTIN.items() if b.staged} == {k for k in BUILTIN if kernel_latency(k) > 0}


# -- [[edge]] -------------------------------------------------------------------------------------------

def test_edge_unknown_key():
    check_edge("capcity = 4", f"t.toml:14: edge[0].capcity: unknown key; did you mean capacity? use one of: {EDGE_KEYS}")


def test_edge_unknown_key_named():
    check_edge('name = "uv"\nsize = 4', f't.toml:15: edge "uv".size: unknown key; use one of: {EDGE_KEYS}')


def test_edge_missing_from():
    check(BASE.replace('from = "u"\n', ""), 't.toml:10: edge[0].from: missing; add from = "<node name>"')


def test_edge_missing_to():
    check(BASE.replace('to = "v"\n', ""), 't.toml:10: edge[0].to: missing; add to = "<node name>"')


def test_edge_missing_capacity():
    check(BASE.replace("capacity = 4\n", ""), "t.toml:10: edge[0].capacity: missing; add capacity = <tokens>, at least 1")


def test_edge_unknown_node():
    check(BASE.replace('to = "v"', 'to = "y"'), 't.toml:12: edge[0].to: unknown node "y"; use one of: u, v')


def test_edge_unknown_node_close():
    check(BASE.replace('from = "u"', 'from = "U"'), 't.toml:11: edge[0].from: unknown node "U"; use one of: u, v')


def test_edge_node_not_string():
    check(BASE.replace('to = "v"', "to = 2"), "t.toml:12: edge[0].to: must be a node name, not 2; use one of: u, v")


def test_self_loop():
    check(BASE.replace('to = "v"', 'to = "u"'), "t.toml:12: edge[0].to: self-loop u -> u; "
          "connect two different nodes (a network is acyclic)")


def test_directed_cycle():
    check(BASE + '\n[[node]]\nname = "w"\n\n[[edge]]\nname = "vw"\nfrom = "v"\nto = "w"\ncapacity = 2\n'
          '\n[[edge]]\nname = "wu"\nfrom = "w"\nto = "u"\ncapacity = 2\n',
          't.toml:24: edge "wu": directed cycle u -> v -> w -> u; remove or reverse an edge on the cycle '
          "(a network is acyclic; an SDF feedback loop carries initial items, 004)")


def test_two_node_cycle():
    check_edge('\n[[edge]]\nfrom = "v"\nto = "u"\ncapacity = 2', "t.toml:15: edge[1]: directed cycle u -> v -> u; "
               "remove or reverse an edge on the cycle (a network is acyclic; an SDF feedback loop carries initial "
               "items, 004)")


def test_capacity_zero():
    check(BASE.replace("capacity = 4", "capacity = 0"), "t.toml:13: edge[0].capacity: must be an integer in 1..65536, "
          "not 0; use a data channel capacity in tokens")


def test_capacity_bool():
    check(BASE.replace("capacity = 4", "capacity = true"), "t.toml:13: edge[0].capacity: must be an integer in 1..65536, "
          "not true (a boolean); use a data channel capacity in tokens")


def test_capacity_string():
    check(BASE.replace("capacity = 4", 'capacity = "4"'), 't.toml:13: edge[0].capacity: must be an integer in 1..65536, '
          'not "4"; use a data channel capacity in tokens')


def test_capacity_float():
    check(BASE.replace("capacity = 4", "capacity = 4.0"), "t.toml:13: edge[0].capacity: must be an integer in 1..65536, "
          "not 4.0; use a data channel capacity in tokens")


def test_threshold_equal_capacity():
    check_edge("threshold = 4", 't.toml:14: edge[0].threshold: 4 is not below capacity 4; use 0..3 or "auto"')


def test_threshold_above_capacity():
    check_edge("threshold = 9", 't.toml:14: edge[0].threshold: 9 is not below capacity 4; use 0..3 or "auto"')


def test_threshold_negative():
    check_edge("threshold = -1", 't.toml:14: edge[0].threshold: must be an integer >= 0 or "auto", not -1; '
               f"{AUTO_FIX}")


def test_threshold_word():
    check_edge('threshold = "inf"', 't.toml:14: edge[0].threshold: must be an integer >= 0 or "auto", not "inf"; '
               f"{AUTO_FIX}")


def test_interval_negative():
    check_edge("interval = -1", 't.toml:14: edge[0].interval: must be an integer in 0..4294967296, "auto" or "inf", not -1; '
               f'{AUTO_FIX}, or "inf" for none')


def test_interval_word():
    check_edge('interval = "infinite"', 't.toml:14: edge[0].interval: must be an integer in 0..4294967296, "auto" or "inf", '
               f'not "infinite"; {AUTO_FIX}, or "inf" for none')


def test_interval_bool():
    check_edge("interval = false", 't.toml:14: edge[0].interval: must be an integer in 0..4294967296, "auto" or "inf", '
               f'not false (a boolean); {AUTO_FIX}, or "inf" for none')


def test_output_buffer_above_capacity():
    check_edge("output_buffer = 5", "t.toml:14: edge[0].output_buffer: 5 exceeds capacity 4; "
               "use 0..4 (the output buffer is part of the channel)")


def test_output_buffer_negative():
    check_edge("output_buffer = -1", "t.toml:14: edge[0].output_buffer: must be an integer >= 0, not -1; "
               "use 0 for no output buffer")


def test_control_capacity_zero():
    check_edge("control_capacity = 0", 't.toml:14: edge[0].control_capacity: must be an integer in 1..65536 or "auto", '
               'not 0; use "auto" to let sfdf size the control channel')


def test_width_zero():
    check_edge("width = 0", "t.toml:14: edge[0].width: must be an integer in 1..64, not 0; "
               "use a payload width of 1 to 64 bits")


def test_width_too_wide():
    check_edge("width = 65", "t.toml:14: edge[0].width: must be an integer in 1..64, not 65; "
               "use a payload width of 1 to 64 bits")


def test_edge_name_not_identifier():
    check_edge('name = "u v"', f't.toml:14: edge[0].name: "u v" is not an identifier; {IDENT}')


def test_duplicate_edge_name():
    check(BASE.replace("[[edge]]\n", '[[edge]]\nname = "e"\n') + '\n[[edge]]\nname = "e"\nfrom = "u"\nto = "v"\n'
          "capacity = 1\n", 't.toml:17: edge[1].name: duplicate name "e" (also edge[0]); give every edge a unique name')


def test_named_edge_field():
    check(BASE.replace("[[edge]]\n", '[[edge]]\nname = "uv"\n').replace("capacity = 4", "capacity = 0"),
          't.toml:14: edge "uv".capacity: must be an integer in 1..65536, not 0; use a data channel capacity in tokens')


def test_quoted_key_line():
    check(BASE.replace('to = "v"', '"to" = "y"'), 't.toml:12: edge[0].to: unknown node "y"; use one of: u, v')


def test_edge_table_not_array():
    check(BASE.replace("[[edge]]", "[edge]"),
          "t.toml:10: edge: must be an array of tables, not a table; write each edge as a [[edge]] table")


def test_inline_edges_have_no_line():
    check('node = [{ name = "u" }]\nedge = [{ from = "u", to = "v", capacity = 1 }]\n[network]\nname = "n"\n',
          't.toml: edge[0].to: unknown node "v"; use one of: u')


def test_edge_array_item_not_table():
    check('edge = [1]\n[network]\nname = "n"\n[[node]]\nname = "u"\n',
          "t.toml:1: edge[0]: must be a table, not 1; write each edge as a [[edge]] table")


# -- valid specs ----------------------------------------------------------------------------------------

def edges_of(text: str) -> dict:
    return {e.name: e for e in parse_spec(text).edges}


PARALLEL = BASE + '\n[[edge]]\nfrom = "u"\nto = "v"\ncapacity = 2\n\n[[edge]]\nfrom = "u"\nto = "v"\ncapacity = 3\n'


def test_default_edge_name():
    assert list(edges_of(BASE)) == ["u_v"]


def test_default_names_for_parallel_edges():
    assert [(n, e.capacity) for n, e in edges_of(PARALLEL).items()] == [("u_v", 4), ("u_v_2", 2), ("u_v_3", 3)]


def test_default_names_skip_explicit_names():
    text = PARALLEL.replace("capacity = 3\n", 'capacity = 3\nname = "u_v"\n')
    assert list(edges_of(text)) == ["u_v_2", "u_v_3", "u_v"]


def test_edge_defaults():
    edge = parse_spec(BASE).edges[0]
    assert (edge.src, edge.dst, edge.capacity, edge.control_capacity, edge.output_buffer, edge.interval,
            edge.threshold, edge.width) == ("u", "v", 4, "auto", 0, "auto", "auto", 32)


def test_network_defaults():
    net = parse_spec(BASE, "x.toml")
    assert (net.name, net.mode, net.dummy_algorithm, net.filtering, net.live_credit, net.data_width,
            net.index_width, net.source) == ("n", "credit", "nonpropagation", True, True, 32, 32, "x.toml")


def test_node_defaults():
    node = parse_spec(BASE).nodes[0]
    assert (node.name, node.kernel, dict(node.params), node.ii, node.control_messages) == ("u", None, {}, 1, 0)


def test_interval_inf_is_none():
    assert parse_spec(with_edge('interval = "inf"')).edges[0].interval is None


def test_interval_zero():
    assert parse_spec(with_edge("interval = 0")).edges[0].interval == 0


def test_threshold_zero_and_below_capacity():
    assert parse_spec(with_network("live_credit = false") + "threshold = 3\n").edges[0].threshold == 3


def test_output_buffer_equal_capacity():
    assert parse_spec(with_network('mode = "inband"') + "output_buffer = 4\n").edges[0].output_buffer == 4


def test_width_defaults_to_data_width():
    assert parse_spec(with_network("data_width = 16")).edges[0].width == 16


def test_width_override():
    assert parse_spec(with_edge("width = 64")).edges[0].width == 64


def test_control_messages_unbounded():
    assert parse_spec(with_node('control_messages = "unbounded"')).nodes[0].control_messages is None


def test_random_filter_default_params():
    assert dict(parse_spec(with_node('kernel = "random_filter"')).nodes[0].params) == {"rate": 0.0, "seed": 1}


def test_random_filter_integer_rate_is_float():
    params = parse_spec(with_node('kernel = "random_filter"\nparams = { rate = 1, seed = 7 }')).nodes[0].params
    assert dict(params) == {"rate": 1.0, "seed": 7} and isinstance(params["rate"], float)


def test_variance_kernel_params():
    assert all(KERNELS[k] == {} for k in ("variance_mean", "variance_mean_sq", "variance_join"))
    assert list(KERNELS["variance_source"]) == ["filter_zeros"]
    params = parse_spec(with_node('kernel = "variance_source"\nparams = { filter_zeros = 0 }')).nodes[0].params
    assert dict(params) == {"filter_zeros": 0}
    check_node('kernel = "variance_source"\nparams = { filter_zeros = 2 }',
               't.toml:7: node "u".params.filter_zeros: must be an integer in 0..1, not 2; use 1 to filter zero '
               "pixels (000 Fig. 1) or 0 to send every pixel (the no-filtering baseline)")


def test_a_network_of_one_node_is_refused():
    """One node alone would be its own source and sink port (generate, build and cosim could not make it)."""
    with pytest.raises(SpecError) as info:
        parse_spec('[network]\nname = "one"\n[[node]]\nname = "u"\nkernel = "random_filter"\n', "t.toml")
    assert str(info.value) == ('t.toml:4: node "u": has no edges; a network needs a source and a sink joined by '
                               'channels: add a second [[node]] and an [[edge]] to it')


def test_a_node_without_edges_is_refused_by_every_command():
    """check, simulate and generate agree: a lone node would be a source and a sink port at once."""
    check(BASE + '\n[[node]]\nname = "lonely"\n',
          't.toml:16: node "lonely": has no edges; connect it with an [[edge]] or remove it')


def test_inline_edge_array():
    text = 'node = [{ name = "u" }, { name = "v" }]\nedge = [{ from = "u", to = "v", capacity = 1 }]\n[network]\nname = "n"\n'
    assert list(edges_of(text)) == ["u_v"]


def test_inband_with_algorithm():
    net = parse_spec(with_network('mode = "inband"\ndummy_algorithm = "propagation"\nfiltering = false'))
    assert (net.mode, net.dummy_algorithm, net.filtering) == ("inband", "propagation", False)


# -- files and examples ---------------------------------------------------------------------------------

def test_load_spec_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_spec(tmp_path / "nope.toml")


def test_load_spec_not_utf8(tmp_path):
    path = tmp_path / "bin.toml"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert str(info.value) == f"{path}: TOML: not UTF-8 text (byte 0); save the file as UTF-8"


def test_load_spec_names_the_file(write_file):
    path = write_file("bad.toml", BASE.replace("capacity = 4", "capacity = 0"))
    with pytest.raises(SpecError, match=rf"^{path}:13: edge\[0\]\.capacity: "):
        load_spec(path)


EXAMPLE_NAMES = ["variance", "fig3_deadlock", "diamond", "blast", "ob_fig2", "ob_fig2_safe", "teleport", "fhr",
                 "fhr_feedback", "residual", "residual_unregistered", "residual_pipelined", "trigger"]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_parses(examples, name):
    path = examples / f"{name}.toml"
    assert path.read_text().startswith("# ")
    assert load_spec(path).name == name


def test_all_examples_are_tested(examples):
    assert sorted(p.stem for p in examples.glob("*.toml")) == sorted(EXAMPLE_NAMES)


def test_example_variance(examples):
    net = load_spec(examples / "variance.toml")
    assert (net.mode, [e.capacity for e in net.edges]) == ("credit", [32] * 4)
    # The kernels fix the widths (gen/kernels.py): pixel + last flag, sum, sum_sq.
    assert [e.width for e in net.edges] == [17, 17, 48, 64]
    assert {n.name: (n.kernel, n.control_messages) for n in net.nodes} == {
        "u": ("variance_source", 1), "v": ("variance_mean", 0), "w": ("variance_mean_sq", 0), "x": ("variance_join", 0)}
    assert {(e.src, e.dst) for e in net.edges} == {("u", "v"), ("u", "w"), ("v", "x"), ("w", "x")}


def test_example_fig3(examples):
    net = load_spec(examples / "fig3_deadlock.toml")
    assert {(e.capacity, e.threshold, e.interval) for e in net.edges} == {(32, 31, None)}
    assert net.node_by_name["w"].params["rate"] == 0.75


def test_example_diamond(examples):
    net = load_spec(examples / "diamond.toml")
    assert (net.mode, net.dummy_algorithm) == ("inband", "nonpropagation")
    assert {e.name: e.capacity for e in net.edges} == {"uv": 4, "vx": 4, "uw": 16, "wx": 16}


def test_example_blast(examples):
    net = load_spec(examples / "blast.toml")
    pairs = [(e.src, e.dst) for e in net.edges]
    assert 8 <= len(net.nodes) <= 10 and len(net.sources) == 1 and len(net.sinks) == 1
    assert any(pairs.count(p) > 1 for p in pairs)
    assert {"hit_merge_ungapped_ext", "hit_merge_ungapped_ext_2"} <= set(net.edge_by_name)
    assert all(16 <= e.capacity <= 64 for e in net.edges)


def test_example_ob_fig2(examples):
    unsafe = load_spec(examples / "ob_fig2.toml")
    safe = load_spec(examples / "ob_fig2_safe.toml")
    assert (unsafe.mode, unsafe.filtering) == ("inband", False)
    assert {e.name: (e.capacity, e.output_buffer) for e in unsafe.edges} == {
        "uv": (4, 0), "vx": (4, 0), "uw": (16, 8), "wx": (16, 8)}
    assert [e.capacity for e in safe.edges] == [e.capacity for e in unsafe.edges]


# -- properties -----------------------------------------------------------------------------------------

@given(st.text(max_size=200))
def test_any_text_is_a_network_or_one_line_error(text):
    try:
        parse_spec(text)
    except SpecError as error:
        assert "\n" not in str(error)


@given(st.integers(-3, 40), st.integers(-3, 40))
def test_threshold_accepted_iff_below_capacity(threshold, capacity):
    text = with_network("live_credit = false").replace("capacity = 4", f"capacity = {capacity}\nthreshold = {threshold}")
    try:
        parse_spec(text)
    except SpecError:
        assert not 0 <= threshold < capacity
    else:
        assert 0 <= threshold < capacity


@given(st.lists(st.sampled_from(["u", "v", "w"]), min_size=2, max_size=12))
def test_parallel_edge_names_are_unique(ends):
    pairs = [(a, b) for a, b in itertools.pairwise(ends) if a < b]
    assume({n for pair in pairs for n in pair} == set("uvw"))  # a node without edges is refused
    text = '[network]\nname = "n"\n' + "".join(f'[[node]]\nname = "{n}"\n' for n in "uvw") + "".join(
        f'[[edge]]\nfrom = "{a}"\nto = "{b}"\ncapacity = 1\n' for a, b in pairs)
    names = [e.name for e in parse_spec(text).edges]
    assert len(set(names)) == len(names) == len(pairs)
    assert all(n == f"{a}_{b}" or n.startswith(f"{a}_{b}_") for n, (a, b) in zip(names, pairs))


# -- kernels that fix widths and inputs (the variance network) ------------------------------------------
def variance_text(examples, old="", new=""):
    return (examples / "variance.toml").read_text().replace(old, new, 1)


def test_variance_edge_width_is_fixed_by_its_kernel(examples):
    text = variance_text(examples, 'to = "v"\ncapacity = 32\n', 'to = "v"\ncapacity = 32\nwidth = 16\n')
    line = text.splitlines().index("width = 16") + 1
    check(text, f"t.toml:{line}: edge \"uv\".width: variance_source sends 17-bit payloads, not 16; "
          "remove width or set it to 17")
    assert parse_spec(text.replace("width = 16", "width = 17")).edges[0].width == 17


def test_variance_widths_follow_the_index_width(examples):
    net = parse_spec(variance_text(examples, "index_width = 32", "index_width = 20"))
    assert [e.width for e in net.edges] == [17, 17, 36, 52]


def test_variance_join_needs_mean_and_mean_sq(examples):
    text = variance_text(examples, 'kernel = "variance_mean_sq"', 'kernel = "variance_mean"')
    line = text.splitlines().index('kernel = "variance_join"') + 1
    check(text, f"t.toml:{line}: node \"x\".kernel: variance_join needs a 48-bit sum and a 64-bit sum_sq input "
          "(from a variance_mean and a variance_mean_sq), not 48 and 48 bits; connect it as in examples/variance.toml")


def test_variance_source_must_be_a_source():
    check(BASE.replace('name = "v"\n', 'name = "v"\nkernel = "variance_source"\n'),
          't.toml:9: node "v".kernel: variance_source reads pixels from its AXI4-Stream port, so it must be a '
          "source; remove its in-edges")
