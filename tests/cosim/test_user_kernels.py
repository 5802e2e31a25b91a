"""Your own kernels in the cocotb lane and on the fast device (docs/kernels.md): the RTL against the reference
model that runs the goldens, token by token, with filtering, back-pressure and reconvergent paths; a wrong
golden stopped at its first token; a kernel that breaks its ``may_filter = false`` promise named; kernels that
take control messages as beats (``messages = true``), at a source, inside a reconvergent path and at a sink."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sfdf.cosim.network import run_network
from sfdf.gen.spec import load_spec

pytestmark = pytest.mark.cosim

KERNELS = Path(__file__).resolve().parents[1] / "kernels"

#: The edges of a diamond a -> b -> d, a -> c -> d, each of capacity 4.
DIAMOND_EDGES = """
[[edge]]
from = "a"
to = "b"
capacity = 4

[[edge]]
from = "a"
to = "c"
capacity = 4

[[edge]]
from = "b"
to = "d"
capacity = 4

[[edge]]
from = "c"
to = "d"
capacity = 4
"""

#: A diamond of stalling kernels: a -> b (x3, filters multiples of 5) and a -> c (x7) meet at d (their sum,
#: filtering multiples of 4): a reconvergent path whose kernels refuse and hold beats at random.
DIAMOND = """[network]
name = "stalls"
data_width = 16

[[node]]
name = "a"

[[node]]
name = "b"
kernel = {{ amaranth = "stall:Stall", golden = "stall:{golden}" }}
params = {{ K = 3, DROP = 5 }}
latency = 2

[[node]]
name = "c"
kernel = {{ amaranth = "stall:Stall", golden = "stall:StallGolden" }}
params = {{ K = 7 }}
latency = 2

[[node]]
name = "d"
kernel = {{ amaranth = "stall:Stall", golden = "stall:StallGolden" }}
params = {{ DROP = 4, INPUTS = "i_b_d,i_c_d" }}
latency = 2
""" + DIAMOND_EDGES

LIAR = """[network]
name = "liar"
data_width = 16

[[node]]
name = "a"

[[node]]
name = "b"
kernel = { amaranth = "stall:Liar", golden = "stall:HonestGolden" }
latency = 0
may_filter = false

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


#: Kernels taking messages (tests/kernels/stall.py ``MSG = 1``) on a reconvergent path from a source that
#: takes them too: a (x5, filters multiples of 3, answers frame ends) -> b (x3, filters multiples of 4) and
#: a -> c (x7) meet at d (their sum); b, c and d answer every frame end with their count of filtered tokens
#: where their last data beat filtered; with ``lie = 1`` b's kernel answers with a result where it did not
#: too, which its golden does or not (``HonestGolden``).
MESSAGES = """[network]
name = "answers"
mode = "{mode}"
data_width = 16

[[node]]
name = "a"
kernel = {{ amaranth = "stall:Stall", golden = "stall:StallGolden" }}
params = {{ K = 5, DROP = 3, OUTPUTS = "o_a_b,o_a_c", MSG = 1 }}
messages = true

[[node]]
name = "b"
kernel = {{ amaranth = "stall:Stall", golden = "stall:{golden}" }}
params = {{ K = 3, DROP = 4, MSG = 1, LIE = {lie} }}
latency = 2
messages = true

[[node]]
name = "c"
kernel = {{ amaranth = "stall:Stall", golden = "stall:StallGolden" }}
params = {{ K = 7 }}
latency = 2

[[node]]
name = "d"
kernel = {{ amaranth = "stall:Stall", golden = "stall:StallGolden" }}
params = {{ DROP = 5, INPUTS = "i_b_d,i_c_d", MSG = 1 }}
latency = 2
messages = true
""" + DIAMOND_EDGES


def spec_with_kernels(folder: Path, text: str) -> Path:
    shutil.copy(KERNELS / "stall.py", folder / "stall.py")
    path = folder / "net.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("pause", [0.0, 0.4])
def test_hillas_kernels_match_their_goldens(pause, examples, verilator_toolchain, cosim_build_root):
    """examples/kernels/hillas.toml: zero suppression in Verilog, moments in Amaranth (latency 3, i_index), the
    join in Verilog; both branches filter and meet again."""
    run = run_network(load_spec(examples / "kernels" / "hillas.toml"), build_dir=cosim_build_root,
                      computations=1100, seed=3, pause=pause, max_frame=64)  # the index wraps inside
    assert not run.model_deadlocked and run.passed, run.results.summary()


def test_stalling_kernels_on_a_reconvergent_path(tmp_path, verilator_toolchain, cosim_build_root):
    run = run_network(load_spec(spec_with_kernels(tmp_path, DIAMOND.format(golden="StallGolden"))),
                      build_dir=cosim_build_root, computations=300, seed=4, pause=0.3)
    assert not run.model_deadlocked and run.passed, run.results.summary()


@pytest.mark.parametrize("pause", [0.0, 0.4])
def test_the_frame_size_kernel_answers_every_frame_end(pause, examples, verilator_toolchain, cosim_build_root):
    """examples/kernels/size.toml: frame_size.v sums each frame's pixels and answers the frame end with the sum;
    the source filters half of them, so some frames reach it as their frame end alone."""
    from sfdf.cosim.network import stimulus
    from sfdf.gen.refmodel import simulate

    network = load_spec(examples / "kernels" / "size.toml")
    run = run_network(network, build_dir=cosim_build_root, computations=400, seed=2, pause=pause, max_frame=4)
    assert not run.model_deadlocked and run.passed, run.results.summary()
    frames = stimulus(network, 400, 2, 4)["cam"]
    sink = simulate(network, inputs={"cam": frames}).outputs["size"]  # what the RTL matched: a sum per frame
    assert [kind for kind, *_ in sink] == ["data", "control"] * len(frames)


@pytest.mark.parametrize("mode", ["credit", "inband"])
def test_kernels_answer_messages_on_a_reconvergent_path(mode, tmp_path, verilator_toolchain, cosim_build_root):
    run = run_network(load_spec(spec_with_kernels(tmp_path, MESSAGES.format(mode=mode, lie=0, golden="StallGolden"))),
                      build_dir=cosim_build_root, computations=300, seed=6, pause=0.3, max_frame=5)
    assert not run.model_deadlocked and run.passed, run.results.summary()


def test_a_result_on_a_message_where_its_computation_emitted_is_named(tmp_path, verilator_toolchain, cosim_build_root):
    """The model stops at the golden that does it; the RTL's assertion names the kernel that does it (behind a
    golden that does not)."""
    from sfdf.gen.refmodel import simulate
    from sfdf.gen.refmodel.kernels import GoldenError

    network = load_spec(spec_with_kernels(tmp_path, MESSAGES.format(mode="credit", lie=1, golden="StallGolden")))
    with pytest.raises(GoldenError, match=r'node "b".kernel.golden: at computation \d+: message\(\d+\) returned a '
                       "result for output 'o', which this computation already emitted on"):
        simulate(network, computations=300, frame_length=5)
    network = load_spec(spec_with_kernels(tmp_path, MESSAGES.format(mode="credit", lie=1, golden="HonestAnswers")))
    run = run_network(network, build_dir=cosim_build_root, computations=200, seed=6, pause=0.2, max_frame=5)
    assert not run.passed
    assert run.results.violations[:1] == [('node "b": its kernel answered a message with a result on o, where the '
                                           "computation it follows emitted (docs/kernels.md)")]


def test_a_wrong_golden_is_stopped_at_its_first_token(tmp_path, verilator_toolchain, cosim_build_root):
    run = run_network(load_spec(spec_with_kernels(tmp_path, DIAMOND.format(golden="WrongGolden"))),
                      build_dir=cosim_build_root, computations=300, seed=4, pause=0.3)
    assert not run.passed
    (message,) = [run.results.tests[name].message for name in run.results.failed]
    assert "d: token #" in message and "differs in payload" in message, message


def test_a_broken_promise_is_named_in_cosim(tmp_path, verilator_toolchain, cosim_build_root):
    run = run_network(load_spec(spec_with_kernels(tmp_path, LIAR)), build_dir=cosim_build_root, computations=60,
                      seed=2, pause=0.2)
    assert not run.passed
    assert run.results.violations == [('node "b": its kernel filtered on o, but declares may_filter = false '
                                       "(docs/kernels.md)")]


def test_a_broken_promise_is_named_on_the_fast_device(tmp_path, verilator_toolchain, cosim_build_root):
    from sfdf.sw.device import open_device
    from sfdf.sw.sim.fastsim import ContractViolation

    spec = spec_with_kernels(tmp_path, LIAR)
    with pytest.raises(ContractViolation, match='contract violation: node "b": its kernel filtered a token though '
                       "it declares may_filter = false"), \
            open_device(spec, build_dir=cosim_build_root / "fastsim", process=False) as device:
        device.send_frames(enumerate([[1, 2, 3, 4, 5, 6, 7]] * 3))
        device.results()


def test_the_fast_device_runs_user_kernels(examples, verilator_toolchain, cosim_build_root):
    import numpy as np

    from sfdf.gen.analysis import check
    from sfdf.sw.device import open_device
    from sfdf.sw.spark.checks import ModelChecker

    spec = examples / "kernels" / "hillas.toml"
    rng = np.random.default_rng(5)
    frames = [rng.integers(0, 300, 64) for _ in range(12)]
    # the default build folder: the Spark job's test of this spec opens the same harness (tests/test_sw_spark.py)
    with open_device(spec, backpressure=0.3) as device:
        device.send_frames(enumerate(frames))
        results = device.results()
    checker = ModelChecker(check(load_spec(spec)).network)
    expected = checker.expected(frames)
    assert [checker.observed(r) for r in results] == expected
    assert all(len(e["hil"]) == 1 for e in expected)  # one result per frame, at its last word


def test_the_fast_device_runs_a_kernel_that_answers_messages(examples, verilator_toolchain, cosim_build_root):
    """examples/kernels/size.toml on the fast device: every frame's total, on its frame end, as the golden says."""
    import numpy as np

    rng = np.random.default_rng(7)
    frames = [rng.integers(0, 1 << 16, int(rng.integers(1, 20))) for _ in range(30)]
    expected = fast_device_matches_the_model(examples / "kernels" / "size.toml", frames, cosim_build_root)
    assert all(len(e["size"]) == 1 for e in expected)  # one total per frame


def fast_device_matches_the_model(spec, frames, cosim_build_root) -> list[dict]:
    """``frames`` through ``spec`` on the fast device under back-pressure, every result checked against the model
    (:class:`sfdf.sw.spark.checks.ModelChecker`); returns what the model expected, per frame."""
    from sfdf.gen.analysis import check
    from sfdf.sw.device import open_device
    from sfdf.sw.spark.checks import ModelChecker

    with open_device(spec, build_dir=cosim_build_root / "fastsim", backpressure=0.3, process=False) as device:
        device.send_frames(enumerate(frames))
        results = device.results()
    checker = ModelChecker(check(load_spec(spec)).network)
    expected = checker.expected(frames)
    assert [checker.observed(r) for r in results] == expected
    return expected


def test_the_camera_trigger_in_rtl_and_on_the_fast_device(examples, verilator_toolchain, cosim_build_root):
    """examples/trigger.toml on Verilator against the model (random frames of 1 to 12 words, so some reach 8
    bright pixels and some do not), and on the fast device: a result only for the frames that trigger."""
    import numpy as np

    spec = examples / "trigger.toml"
    run = run_network(load_spec(spec), build_dir=cosim_build_root, computations=400, seed=3, pause=0.3, max_frame=12)
    assert not run.model_deadlocked and run.passed, run.results.summary()
    rng = np.random.default_rng(9)
    frames = [np.where(rng.random(int(rng.integers(1, 40))) < 0.3, rng.integers(1001, 1 << 16, 40)[:1], 0)
              for _ in range(40)]
    expected = fast_device_matches_the_model(spec, frames, cosim_build_root)
    triggered = [len(e["trigger"]) for e in expected]
    assert 0 < sum(triggered) < len(frames) and triggered == [int((f > 1000).sum() >= 8) for f in frames]
