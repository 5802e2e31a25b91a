"""Your own kernels (docs/kernels.md) without a simulator: the spec's contract fields, the filtering promise, the
golden in the reference model, and the checks of a kernel against its node's edges before elaboration."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sfdf.cli import main
from sfdf.gen.contract import UserKernel, kernel_ports, may_filter
from sfdf.gen.errors import UserError
from sfdf.gen.refmodel import simulate
from sfdf.gen.refmodel.kernels import GoldenError
from sfdf.gen.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]
KERNELS = Path(__file__).with_name("kernels")
EXAMPLES = ROOT / "examples"

CHAIN = """[network]
name = "chain"
data_width = 16
{network}
[[node]]
name = "a"

[[node]]
name = "b"
kernel = {kernel}
{node}
[[node]]
name = "c"

[[edge]]
from = "a"
to = "b"
capacity = 4

[[edge]]
from = "b"
to = "c"
capacity = 4
"""

STALL = '{ amaranth = "stall:Stall", golden = "stall:StallGolden" }'


def chain(folder: Path, kernel: str = STALL, node: str = "", network: str = "") -> Path:
    """A three-node chain whose middle node runs ``kernel``, written into ``folder`` beside the test kernels."""
    for path in KERNELS.iterdir():
        if path.is_file():
            shutil.copy(path, folder / path.name)
    spec = folder / "chain.toml"
    spec.write_text(CHAIN.format(kernel=kernel, node=node, network=network))
    return spec


def sfdf(capsys, *args):
    """``(status, stdout, stderr)`` of the CLI run in this process."""
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def refused(run, *expected: str) -> str:
    """Exit 2 and one line on stderr that holds every ``expected`` text."""
    status, out, err = run
    assert status == 2, (status, out[-2000:], err[-2000:])
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


# -- the spec -------------------------------------------------------------------------------------------------

def test_a_user_kernel_in_the_spec(tmp_path):
    net = load_spec(chain(tmp_path, node="latency = 2\nmay_filter = false\nparams = { K = 5 }"))
    b = net.node_by_name["b"]
    assert b.kernel == UserKernel("amaranth", "stall:Stall", None, "stall:StallGolden", str(tmp_path))
    assert (b.latency, b.may_filter, b.index, b.last, b.params) == (2, False, False, False, {"K": 5})
    ports = kernel_ports(net, "b")
    assert (ports.inputs, ports.outputs) == ((("i", 16),), (("o", 16),))
    assert not may_filter(b)


def test_a_verilog_kernel_is_found_beside_the_spec(tmp_path):
    net = load_spec(chain(tmp_path, '{ verilog = "wide.v", module = "wide", golden = "stall:HonestGolden" }'))
    kernel = net.node_by_name["b"].kernel
    assert (kernel.language, kernel.module, kernel.file) == ("verilog", "wide", str(tmp_path / "wide.v"))


@pytest.mark.parametrize("kernel, node, expected", [
    ('{ amaranth = "stall:Stall" }', "", ('node "b".kernel: has no golden', 'add golden = "<module>:<Class>"')),
    ('{ golden = "stall:StallGolden" }', "", ('node "b".kernel: names no hardware',)),
    ('{ verilog = "wide.v", amaranth = "stall:Stall", golden = "stall:StallGolden" }', "",
     ("names both a Verilog and an Amaranth kernel",)),
    ('{ verilog = "missing.v", module = "wide", golden = "stall:StallGolden" }', "",
     ('node "b".kernel.verilog: "missing.v" is not a file',)),
    ('{ verilog = "wide.v", golden = "stall:StallGolden" }', "", ("names no Verilog module",)),
    ('{ amaranth = "stall:Stall", golden = "nowhere:Golden" }', "", ("finds no module nowhere beside the spec",)),
    ('{ amaranth = "stall", golden = "stall:StallGolden" }', "", ('"stall" is not a module and a class',)),
    ('{ amaranth = "stall:Stall", golden = "stall:StallGolden", hdl = "x" }', "", ('node "b".kernel.hdl: unknown key',)),
    ('{ amaranth = "stall:Stall", golden = "stall:StallGolden", module = "x" }', "", ("remove module",)),
    (STALL, "latency = 5000", ('node "b".latency: must be an integer in 0..1024',)),
    (STALL, "may_filter = 1", ('node "b".may_filter: must be true or false',)),
    (STALL, "last = true", ('node "b".last: applies to a source only',)),
    (STALL, "messages = 1", ('node "b".messages: must be true or false',)),
    (STALL, "params = { K = [1] }", ('node "b".params.K: must be an integer, a number, a boolean or a string',)),
    ('"random_filter"', "latency = 2", ('node "b".latency: describes a user kernel', "remove latency")),
    ('{ verilog = "wide.v", module = "chain", golden = "stall:StallGolden" }', "",
     ("is the network's name, which names the generated top module",)),
    ('{ verilog = "wide.v", module = "wire", golden = "stall:StallGolden" }', "", ("is a Verilog keyword",)),
])
def test_user_kernel_mistakes_are_one_line(tmp_path, kernel, node, expected, capsys):
    refused(sfdf(capsys, "check", chain(tmp_path, kernel, node)), "chain.toml", *expected)


# -- the filtering promise --------------------------------------------------------------------------------------

def with_no_filtering(text: str) -> str:
    return text.replace("[network]\n", "[network]\nfiltering = false\n", 1)


@pytest.mark.parametrize("example, expected", [
    ("diamond.toml", ('node "u".params.rate: random_filter with rate 0.1 filters tokens', "set rate = 0")),
    ("variance.toml", ('node "u".params.filter_zeros: variance_source with filter_zeros = 1 filters zero pixels',)),
])
def test_no_filtering_with_a_filtering_builtin_is_refused(tmp_path, example, expected, capsys):
    spec = tmp_path / example
    spec.write_text(with_no_filtering((EXAMPLES / example).read_text()))
    for command in (["check"], ["simulate", "--computations", "20"], ["generate", "-o", tmp_path / "out"]):
        refused(sfdf(capsys, command[0], spec, *command[1:]), *expected, "or set filtering = true in [network]")
    assert not (tmp_path / "out" / "chain.v").exists()


def test_no_filtering_with_a_result_per_frame_is_refused(tmp_path, capsys):
    spec = tmp_path / "variance.toml"
    spec.write_text(with_no_filtering((EXAMPLES / "variance.toml").read_text()).replace(
        'kernel = "variance_source"', 'kernel = "variance_source"\nparams = { filter_zeros = 0 }'))
    refused(sfdf(capsys, "check", spec), 'node "v".kernel: variance_mean emits once per frame',
            "set filtering = true in [network]")


def test_no_filtering_with_a_user_kernel_that_may_filter_is_refused(tmp_path, capsys):
    refused(sfdf(capsys, "check", chain(tmp_path, network="filtering = false")), 'node "b".kernel', "may filter",
            "declare may_filter = false")


def test_no_filtering_is_accepted_where_no_kernel_filters(tmp_path, capsys):
    assert sfdf(capsys, "check", chain(tmp_path, node="may_filter = false", network="filtering = false"))[0] == 0
    assert sfdf(capsys, "check", EXAMPLES / "ob_fig2_safe.toml")[0] == 0  # its kernels have rate 0


# -- the golden in the reference model ------------------------------------------------------------------------

def test_the_model_runs_the_golden(tmp_path):
    net = load_spec(chain(tmp_path, node="params = { K = 5, DROP = 4 }"))
    result = simulate(net, inputs={"a": [[1, 2, 3, 4, 5, 6]]})
    assert [e[1:] for e in result.outputs["c"] if e[0] == "data"] == [(1, 5), (2, 10), (3, 15), (5, 25), (6, 30)]


@pytest.mark.parametrize("golden, node, expected", [
    ("stall:Raises", "", "at computation 3: raised ZeroDivisionError: a golden's own bug"),
    ("stall:StallGolden", "params = { K = 70000, W = 20 }", "returned 70000 for output 'o', not an integer of 16 bits"),
    ("stall:StallGolden", "params = { DROP = 2 }\nmay_filter = false",
     "at computation 2: filtered output 'o', and the node declares may_filter = false"),
])
def test_a_golden_that_breaks_the_contract_names_the_node_and_computation(tmp_path, golden, node, expected):
    net = load_spec(chain(tmp_path, f'{{ amaranth = "stall:Stall", golden = "{golden}" }}', node))
    with pytest.raises(GoldenError) as info:
        simulate(net, inputs={"a": [[1, 2, 3, 4]]})
    assert 'node "b".kernel.golden' in str(info.value) and expected in str(info.value)


def test_a_golden_that_refuses_its_params_is_one_line(tmp_path, capsys):
    spec = chain(tmp_path, node="params = { NOPE = 1 }")
    refused(sfdf(capsys, "simulate", spec, "--computations", "10"), 'node "b".params: the golden StallGolden(NOPE) raised TypeError')


# -- the kernel against its node's edges, before elaboration ----------------------------------------------------

@pytest.mark.parametrize("kernel, node, expected", [
    ('{ verilog = "wide.v", module = "wide", golden = "stall:HonestGolden" }', "params = { W = 8 }",
     ("wide.v: port i_data of wide is input [7:0] bits, not input of 16 bits",)),
    ('{ verilog = "wide.v", module = "other", golden = "stall:HonestGolden" }', "", ("wide.v: it has no module other",)),
    ('{ amaranth = "stall:Stall", golden = "stall:StallGolden" }', "params = { W = 12 }",
     (('node "b".kernel.amaranth: stall:Stall member i is not In(stream.Signature(StructLayout({"present": 1, '
       '"data": 16})))'),)),
    ('{ amaranth = "stall:Liar", golden = "stall:HonestGolden" }', "index = true",
     ("member i is not", '"index": 32')),
    ('{ amaranth = "stall:Nowhere", golden = "stall:HonestGolden" }', "", ("stall has no Nowhere",)),
    (STALL, "messages = true", (('stall:Stall member i is not In(stream.Signature(StructLayout({"present": 1, '
                                 '"data": 16, "msg": 1, "mdata": 16})))'),)),
])
def test_a_kernel_that_does_not_fit_its_edges_is_one_line(tmp_path, kernel, node, expected, capsys):
    refused(sfdf(capsys, "generate", chain(tmp_path, kernel, node), "-o", tmp_path / "out"), *expected)
    assert not (tmp_path / "out" / "chain.v").exists()


# -- control messages as kernel beats (messages = true) ----------------------------------------------------------

def size_chain(folder: Path, network: str = "") -> Path:
    """examples/kernels/size.toml's frame_size kernel in the test chain, between a source that filters nothing
    and a sink."""
    for name in ("frame_size.v", "size_golden.py"):
        shutil.copy(EXAMPLES / "kernels" / name, folder / name)
    return chain(folder, '{ verilog = "frame_size.v", module = "frame_size", golden = "size_golden:FrameSize" }',
                 "params = { IN = 16, OUT = 16 }\nmessages = true\n", network)


@pytest.mark.parametrize("mode", ["credit", "inband"])
def test_a_kernel_answers_each_frame_end_with_its_result(tmp_path, mode):
    """The frame's total rides on its frame end at the frame's last index, whatever the frame's length."""
    frames = [[3, 4], [5], [1, 1, 1, 1, 1, 1, 1], [7, 0, 2]]
    result = simulate(load_spec(size_chain(tmp_path, f'mode = "{mode}"')), inputs={"a": frames})
    expected, end = [], 0
    for k, frame in enumerate(frames):
        end += len(frame)
        expected += [("data", end, sum(frame)), ("control", ("frame_end", k))]
    assert result.outputs["c"] == expected


def test_a_kernel_with_message_ports_needs_messages(tmp_path, capsys):
    spec = size_chain(tmp_path)
    spec.write_text(spec.read_text().replace("messages = true\n", ""))
    refused(sfdf(capsys, "generate", spec, "-o", tmp_path / "out"),
            "frame_size.v: module frame_size has port i_msg, which the contract has not",
            "declare the feature that adds it")


def test_a_golden_without_message_is_one_line(tmp_path, capsys):
    spec = chain(tmp_path, '{ amaranth = "stall:Stall", golden = "stall:HonestGolden" }', "messages = true")
    refused(sfdf(capsys, "simulate", spec, "--computations", "10"),
            'node "b".kernel.golden: HonestGolden has no method message(payload), and the node declares messages = true')


def test_a_result_on_a_message_where_the_computation_emitted_names_the_node(tmp_path):
    net = load_spec(chain(tmp_path, STALL, "params = { K = 1, DROP = 3, MSG = 1, LIE = 1 }\nmessages = true"))
    with pytest.raises(GoldenError, match=r'node "b".kernel.golden: at computation 2: message\(0\) returned a result '
                       "for output 'o', which this computation already emitted on"):
        simulate(net, inputs={"a": [[1, 2], [3, 4]]})


def test_generate_copies_a_verilog_kernel_and_lists_it(tmp_path, capsys):
    import json

    spec = chain(tmp_path, '{ verilog = "wide.v", module = "wide", golden = "stall:HonestGolden" }',
                 "may_filter = false")
    assert sfdf(capsys, "generate", spec, "-o", tmp_path / "out")[0] == 0
    manifest = json.loads((tmp_path / "out" / "chain.json").read_text())
    assert manifest["kernel_sources"] == ["wide.v"]
    assert (tmp_path / "out" / "wide.v").read_text() == (KERNELS / "wide.v").read_text()
    contract = manifest["nodes"]["b"]["contract"]
    assert (contract["kind"], contract["module"], contract["golden"], contract["file"]) == \
        ("verilog", "wide", "stall:HonestGolden", "wide.v")
    assert (contract["latency"], contract["may_filter"], contract["inputs"], contract["outputs"]) == \
        (1, False, [["i", 16]], [["o", 16]])
    assert manifest["contract_violation"] == ["b"]
    assert manifest["nodes"]["a"]["contract"]["golden"] == "sfdf.gen.goldens:RandomFilter"


def test_user_errors_are_user_errors():
    assert issubclass(GoldenError, UserError)


def test_the_camera_trigger_answers_only_the_frames_it_triggers_on():
    """examples/trigger.toml: a frame is answered, with its count, only when at least 8 of its pixels exceed
    1000; the others leave their frame end alone (an absent timestamp)."""
    frames = [[2000] * 8, [2000] * 7 + [1000], [0, 5000] * 9, [1001] * 8 + [0] * 100, [999] * 50]
    sink = simulate(load_spec(EXAMPLES / "trigger.toml"), inputs={"cam": frames}).outputs["trigger"]
    answered = [item[2] for item in sink if item[0] == "data"]
    assert answered == [8, 9, 8] and [item[1] for item in sink if item[0] == "control"] == [("frame_end", k)
                                                                                          for k in range(5)]


def test_a_kernel_file_named_like_the_networks_verilog_is_refused(tmp_path, capsys):
    """generate writes ``<network>.v`` and copies each Verilog kernel's file beside it: a kernel file of that name
    would overwrite the network, so it is refused before anything is written."""
    spec = size_chain(tmp_path)
    shutil.copy(tmp_path / "frame_size.v", tmp_path / "chain.v")
    spec.write_text(spec.read_text().replace('verilog = "frame_size.v"', 'verilog = "chain.v"'))
    refused(sfdf(capsys, "generate", spec, "-o", tmp_path / "out"),
            'node "b".kernel.verilog: chain.v is the name of the network\'s own Verilog', "rename the kernel's file")
    assert not (tmp_path / "out" / "chain.v").exists()
