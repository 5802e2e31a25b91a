"""Simulated boards (sfdf board-sim, sw/sim/boardsim.py) behind real pseudo-terminals, and Spark driving them.

Each board is ``sfdf build examples/variance.toml --board ulx3s-85f --no-build --baud 5000000``'s core (5
cycles per UART bit at 25 MHz), run by ``sfdf board-sim DIR --pty`` in its own process: the RTL, or with
``--netlist`` the core as ``synth_ecp5 -nodsp`` maps it. Every result is checked against numpy here,
independently of the job's own check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import termios
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from sfdf.sw.datasets import digits, write_frames
from sfdf.sw.device import open_device
from sfdf.sw.device.results import DeviceDied, FrameTimeout
from sfdf.sw.sim.boardsim import board_process

ROOT = Path(__file__).resolve().parents[1]
SFDF = [str(Path(sys.executable).with_name("sfdf"))]


@pytest.fixture(scope="module")
def board_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("board") / "variance"
    subprocess.run([*SFDF, "build", str(ROOT / "examples" / "variance.toml"), "--board", "ulx3s-85f", "--no-build",
                    "--baud", "5000000", "-o", str(out)], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("boardsim")


def board_sim(board_dir, build_dir, *flags):
    return board_process(board_dir, *flags, build_dir=build_dir)


def expected(pixels) -> tuple[int, int, int]:
    p = np.asarray(pixels, dtype=np.uint64)
    return p.size, int(p.sum()), int((p * p).sum())


def check(results, frames):
    by_id = dict(frames)
    assert [r.frame_id for r in results] == [f for f, _ in frames][:len(results)]
    for r in results:
        assert (r.fields["n"], r.fields["sum"], r.fields["sum_sq"]) == expected(by_id[r.frame_id])


def test_board_sim_over_a_pty_twice(board_dir, build_dir):
    """Two sessions on one simulated board: the break of each resets the numbering; every result exact."""
    frames = digits()[:120]
    with board_sim(board_dir, build_dir) as (path, _):
        for session in (frames[:80], frames[80:]):
            with open_device(board_dir / "variance.json", backend=f"serial:{path}") as device:
                check(list(device.stream(iter(session))), session)


def test_a_session_after_one_that_timed_out_is_exact(board_dir, build_dir):
    """A session whose first frame outlives a tiny budget ends with frames unread on the pty; the next
    session on the same board (a Spark task's retry) answers every frame of its own exactly."""
    frames = digits()[:90]
    with board_sim(board_dir, build_dir) as (path, _):
        for _ in range(3):
            with pytest.raises(FrameTimeout), open_device(board_dir / "variance.json", backend=f"serial:{path}",
                                                         timeout_cycles=2000) as device:
                list(device.stream(iter(frames[:60])))
            with open_device(board_dir / "variance.json", backend=f"serial:{path}") as device:
                check(list(device.stream(iter(frames[60:]))), frames[60:])


class StandInSim:
    """A stand-in for :class:`sfdf.sw.sim.boardsim.BoardSim` behind :class:`sfdf.sw.sim.boardsim.PtyBoard`: no RTL,
    it says what a test puts in ``said`` and records what it hears."""

    pending, leds = 0, 0

    def __init__(self):
        self.said, self.heard = b"", b""

    def run(self, cycles, until_bytes=0):
        return cycles

    def receive(self):
        said, self.said = self.said, b""
        return said

    def send(self, data):
        self.heard += data

    def send_break(self):
        pass

    def close(self):
        pass


def serve_steps(board, steps):
    """``steps`` turns of the bridge's loop."""
    left = iter(range(steps))
    board.serve(stop=lambda: next(left, None) is None)


def test_a_host_flush_during_a_chunk_mutes_what_the_chunk_said():
    """The bridge reads the host before writing: bytes the board said in a chunk during which the host
    flushed its input (before a break) never reach the host. A stale hello among them would be taken for
    the answer to the break, and the real one would end the session as a reset (the two-board Spark test
    saw that on a loaded machine, whose netlist simulation runs long chunks)."""
    from sfdf.sw.sim.boardsim import PtyBoard

    class Board(StandInSim):  # the host flushes while the first chunk runs, which talks
        host, chunks = None, 0

        def run(self, cycles, until_bytes=0):
            self.chunks += 1
            if self.chunks == 1:
                termios.tcflush(self.host, termios.TCIFLUSH)
                self.said = b"stale"
            return cycles

    board = PtyBoard(Board())
    board._muted = False  # a session was open
    board.sim.host = os.open(board.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        serve_steps(board, 3)
        with pytest.raises(BlockingIOError):
            os.read(board.sim.host, 100)
    finally:
        os.close(board.sim.host)
        board.close()


def test_a_break_drops_what_an_earlier_host_left_unread():
    """The output flush that stands for a break on a pty does not clear what the kernel had already passed
    to the master's line discipline: bytes an earlier host wrote and the bridge had not read yet (a session
    that timed out with frames in flight, then a retry on the same board, as Spark's are). The bridge drops
    the host's bytes from a break until it first writes to the host, so the board hears only the new
    session's."""
    from sfdf.sw.sim.boardsim import PtyBoard

    class Board(StandInSim):  # it says hello after each break
        def send_break(self):
            self.said, self.heard = b"hello", b""

    board = PtyBoard(Board())
    try:
        for frames in (b"old frames " * 300, b"new frames"):  # the first host leaves 3,300 bytes unread
            host = os.open(board.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            termios.tcflush(host, termios.TCIFLUSH)
            termios.tcflush(host, termios.TCOFLUSH)  # the break
            serve_steps(board, 5)
            assert os.read(host, 100) == b"hello"
            os.write(host, frames)
            time.sleep(0.2)  # the kernel moves them on to the master's line discipline
            if frames.startswith(b"new"):
                serve_steps(board, 5)
            os.close(host)
        assert board.sim.heard == b"new frames"
    finally:
        board.close()


def test_a_busy_board_does_not_open_twice(board_dir, build_dir):
    from sfdf.sw.device.results import DeviceError

    with board_sim(board_dir, build_dir) as (path, _), \
            open_device(board_dir / "variance.json", backend=f"serial:{path}"), \
            pytest.raises(DeviceError, match="cannot open"):
        open_device(board_dir / "variance.json", backend=f"serial:{path}")


def test_a_break_while_the_board_sends_gets_a_whole_hello(board_dir, build_dir):
    """A break that comes while the board is sending results (a host that gave up on a session, then
    reopens) resets the board mid-packet: the character on the line is finished, then the hello follows
    whole. Cut short, the host's receiver took the hello's start bit for a data bit and lost its framing:
    no hello, and the two tests above that reopen a board failed about half the time in the suite. The
    break falls at every few cycles of two characters' time (5 cycles a bit)."""
    from packets import status_packet

    from sfdf.boards.packets import Status
    from sfdf.sw.device.codec import Codec
    from sfdf.sw.sim.boardsim import board_dir as read_board_dir
    from sfdf.sw.sim.boardsim import simulated_board

    board = read_board_dir(board_dir)
    codec = Codec(json.loads(board.manifest.read_text()))
    hello = status_packet(Status.HELLO)
    frames = digits()[:3]
    tails = 0
    sim = simulated_board(board, build_dir=build_dir)
    try:
        for offset in range(0, 20 * board.divisor, 3):
            sim.send_break()
            sim.run(2_000)
            for number, (_, pixels) in enumerate(frames):
                sim.send(codec.pack_frame(number, pixels))
            sim.run(200_000, until_bytes=20)   # the board is answering
            sim.run(offset)
            sim.send_break()
            sim.run(2_000)
            said = sim.receive()
            assert said.endswith(hello), f"break {offset} cycles into the answers: the board said {said.hex()}"
            tails += len(said) > len(hello)   # the character on the line when the break came
    finally:
        sim.close()
    assert tails >= 10, "the breaks did not come while the board was sending"


def test_a_damaged_byte_drops_the_packet_and_names_the_frame(board_dir, build_dir):
    """Line noise in frame 3's packet: the board's CRC drops it and says so (its acknowledgement comes
    before the results of earlier frames); the session ends naming frame 3 with what was answered before
    exact; a new session sends the rest from there and all are exact."""
    frames = digits()[:10]
    from sfdf.sw.device.codec import Codec

    codec = Codec(json.loads((board_dir / "variance.json").read_text()))
    packet = len(codec.pack_frame(0, frames[0][1]))
    with board_sim(board_dir, build_dir, "--corrupt-byte", str(3 * packet + 20)) as (path, _):
        with open_device(board_dir / "variance.json", backend=f"serial:{path}") as device, \
                pytest.raises(DeviceDied, match=f"dropped frame {frames[3][0]}") as died:
            list(device.stream(iter(frames)))
        answered = died.value.results
        check(answered, frames)
        assert len(answered) <= 3
        with open_device(board_dir / "variance.json", backend=f"serial:{path}") as device:
            rest = frames[len(answered):]
            check(list(device.stream(iter(rest))), rest)


@pytest.mark.heavy
def test_netlist_board_self_check(board_dir, build_dir):
    """The synthesized netlist (synth_ecp5 -nodsp, Yosys's cells, sfdf's DP16KD and MULT18X18D) answers 8 random frames
    exactly as numpy does (the CLI checks each)."""
    run = subprocess.run([*SFDF, "board-sim", str(board_dir), "--netlist", "--frames", "8", "--build-dir",
                          str(build_dir)], check=False, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "8 frames answered, checked against the reference model and numpy, 0 wrong" in run.stdout


def test_x18_block_ram_board_self_check(tmp_path, build_dir):
    """At 1,024 words per source the commit FIFO's DP16KDs run in their x18 mode (byte enables on the
    two lowest address pins, boards/link.py): the RTL with the DP16KD model answers 5 frames exactly."""
    out = tmp_path / "variance"
    subprocess.run([*SFDF, "build", str(ROOT / "examples" / "variance.toml"), "--board", "ulx3s-85f", "--no-build",
                    "--baud", "5000000", "--buffer-words", "1024", "-o", str(out)], check=True, capture_output=True)
    assert "DATA_WIDTH_A(32'd18)" in (out / "variance.board.v").read_text()
    run = subprocess.run([*SFDF, "board-sim", str(out), "--frames", "5", "--build-dir", str(build_dir)],
                         check=False, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "5 frames answered, checked against the reference model and numpy, 0 wrong" in run.stdout


def test_icebreaker_board_self_check(tmp_path, build_dir):
    """The iCEBreaker's core (hdl.dsp.pipelined: unpipelined nodes, one-slot offer registers on joins alone,
    block-RAM channels whose head is the RAM's register; no skid buffers; the serializer reading each beat
    where the sink holds it) answers 8 frames exactly, at 6 cycles per UART bit."""
    out = tmp_path / "variance"
    subprocess.run([*SFDF, "build", str(ROOT / "examples" / "variance.toml"), "--board", "icebreaker", "--no-build",
                    "--baud", "2000000", "-o", str(out)], check=True, capture_output=True)
    core = (out / "variance.board.v").read_text()
    # the iCE40 elaboration: x (two inputs) has offer registers, v (one) none; block-RAM heads
    assert "node_x.offer0" in core and "node_v.offer0" not in core and "from_byp" in core
    assert "status_packet" in core
    run = subprocess.run([*SFDF, "board-sim", str(out), "--frames", "8", "--build-dir", str(build_dir)],
                         check=False, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "8 frames answered, checked against the reference model and numpy, 0 wrong" in run.stdout


def spark_results(out, frames):
    table = pq.read_table(out / "results").to_pandas()
    assert sorted(table["frame_id"]) == sorted(f for f, _ in frames)  # every frame exactly once
    by_id = dict(frames)
    for row in table.itertuples():
        assert row.ok and (row.n, row.sum, row.sum_sq) == expected(by_id[row.frame_id])
    return table


@pytest.mark.heavy
@pytest.mark.spark
def test_spark_over_one_board(board_dir, build_dir, tmp_path):
    """``run_job(..., device="serial:A")``: three partitions take turns on one board (each holds it while it
    runs), and a byte damaged on the line in the first one's frames makes the board drop that packet, the
    task fail and Spark's retry send the partition again: every frame checked, once."""
    from sfdf.sw.spark.config import spark_session
    from sfdf.sw.spark.runs import run_job

    frames = digits()[:90]
    write_frames(frames, tmp_path / "in", rows_per_file=30)
    with board_sim(board_dir, build_dir, "--corrupt-byte", "3000") as (a, proc):
        spark = spark_session("local[2,4]")
        try:
            summary = run_job(ROOT / "examples" / "variance.toml", tmp_path / "in", tmp_path / "out", spark=spark,
                              partitions=3, device=f"serial:{a}", board_dir=board_dir)
        finally:
            spark.stop()
    assert "flipped a bit of byte 3000" in proc.stderr.read()
    assert (summary["frames"], summary["checked"], summary["mismatches"], summary["duplicates"]) == (90, 90, 0, 0)
    assert summary["device"] == f"serial:{a}"
    spark_results(tmp_path / "out", frames)


@pytest.mark.heavy
@pytest.mark.spark
def test_spark_over_two_boards_one_dying(board_dir, build_dir, tmp_path):
    """``sfdf spark --device serial:A,B``: A loses power after ~50 frames; its task fails, Spark's retry
    redoes the partition on B, and every frame is in the results once. (Spark over a netlist board is
    ``bench/host.py --only boards``; the netlist's own answers are test_netlist_board_self_check's.)"""
    frames = digits()[:200]
    write_frames(frames, tmp_path / "in", rows_per_file=50)
    dying = str(50 * 150)  # bytes: about 50 digits frames
    with board_sim(board_dir, build_dir, "--die-after-bytes", dying) as (a, proc_a), \
            board_sim(board_dir, build_dir) as (b, _):
        run = subprocess.run([*SFDF, "spark", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"),
                              "--device", f"serial:{a},{b}", "--board-dir", str(board_dir), "--partitions", "4",
                              "--master", "local[2,4]", "--json"], check=False, capture_output=True, text=True, timeout=900)
        assert proc_a.wait(timeout=5) == 3  # board A did die mid-job
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout)
    assert (summary["frames"], summary["checked"], summary["mismatches"], summary["duplicates"]) == (200, 200, 0, 0)
    spark_results(tmp_path / "out", frames)


@pytest.mark.heavy
@pytest.mark.spark
def test_resource_fpga_on_a_standalone_cluster(board_dir, build_dir, tmp_path):
    """Spark's own scheduling: a worker advertises two simulated boards through sfdf-discover-fpga, tasks
    ask for one each, one board dies mid-job, and every frame is in the results once."""
    from sfdf.sw.spark.config import spark_session
    from sfdf.sw.spark.runs import run_job
    from sfdf.sw.spark.standalone import Cluster

    frames = digits()[:200]
    write_frames(frames, tmp_path / "in", rows_per_file=50)
    script = Path(sys.executable).with_name("sfdf-discover-fpga")
    with board_sim(board_dir, build_dir, "--die-after-bytes", str(50 * 150)) as (a, proc_a), \
            board_sim(board_dir, build_dir) as (b, _):
        conf = {"spark.worker.resource.fpga.amount": "2", "spark.worker.resource.fpga.discoveryScript": str(script)}
        with Cluster(tmp_path / "cluster", workers=1, cores=2, worker_conf=conf,
                     worker_env=[{"SFDF_FPGA_PORTS": f"{a},{b}"}]) as cluster:
            os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
            spark = spark_session(cluster.url, conf={"spark.task.resource.fpga.amount": "1",
                                                     "spark.executor.resource.fpga.amount": "2"})
            try:
                summary = run_job(ROOT / "examples" / "variance.toml", tmp_path / "in", tmp_path / "out",
                                  spark=spark, partitions=4, device="resource:fpga", board_dir=board_dir)
            finally:
                spark.stop()
        assert proc_a.wait(timeout=5) == 3
    assert (summary["frames"], summary["checked"], summary["mismatches"], summary["duplicates"]) == (200, 200, 0, 0)
    spark_results(tmp_path / "out", frames)


def test_discovery_script_lists_existing_ports(tmp_path):
    port = tmp_path / "ttyFAKE"
    port.write_text("")
    env = {**os.environ, "SFDF_FPGA_PORTS": f"{port},{tmp_path / 'gone'}"}
    script = Path(sys.executable).with_name("sfdf-discover-fpga")
    out = subprocess.run([str(script)], capture_output=True, text=True, env=env, check=True).stdout
    assert json.loads(out) == {"name": "fpga", "addresses": [str(port)]}


def test_bad_device_and_board_dir_are_one_line_errors(board_dir, tmp_path):
    cases = [(["--device", "serial:"], "--device: is not a device"),
             (["--device", "usb"], "--device: is not a device"),
             (["--device", "serial:/dev/null"], "--board-dir: is missing"),
             (["--board-dir", str(board_dir)], "--board-dir: is for boards"),
             (["--device", "serial:/dev/null", "--board-dir", str(tmp_path)], "holds no variance.json")]
    write_frames(digits()[:4], tmp_path / "in")
    for extra, message in cases:
        run = subprocess.run([*SFDF, "spark", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"),
                              *extra], check=False, capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr, (extra, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1


def test_board_sim_refuses_a_folder_without_a_board(tmp_path):
    run = subprocess.run([*SFDF, "board-sim", str(tmp_path)], check=False, capture_output=True, text=True)
    assert run.returncode == 2 and "holds no <name>.board.json" in run.stderr and "Traceback" not in run.stderr
