"""What a new user meets in the first hour, through the installed ``sfdf`` command: legal-looking input that
every command refuses alike with one line and exit 2 (never a traceback), bounded counts, output paths
checked before any work."""

import subprocess
import sys
from pathlib import Path

import pytest

SFDF = str(Path(sys.executable).with_name("sfdf"))
ROOT = Path(__file__).resolve().parents[1]
VARIANCE = str(ROOT / "examples" / "variance.toml")

PAIR = '[network]\nname = "{name}"\n[[node]]\nname = "a"\n[[node]]\nname = "b"\n[[edge]]\nfrom = "a"\nto = "b"\ncapacity = 4\n'


def sfdf(*args, cwd=None, timeout=120):
    return subprocess.run([SFDF, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          check=False)


def refused(run, *expected: str) -> str:
    """Exit 2 and one line on stderr that holds every ``expected`` text, no traceback."""
    assert run.returncode == 2, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


# -- 1. legal-looking input ------------------------------------------------------------------------------

ONE_NODE = '[network]\nname = "single"\n[[node]]\nname = "a"\nkernel = "random_filter"\n'


@pytest.mark.parametrize("command", [["check"], ["simulate"], ["generate", "-o", "out"],
                                     ["build", "--board", "ulx3s-85f", "--no-build", "-o", "out"],
                                     ["cosim", "--computations", "10"]])
def test_a_network_of_one_node_is_refused_by_every_command(tmp_path, command):
    spec = tmp_path / "single.toml"
    spec.write_text(ONE_NODE)
    refused(sfdf(command[0], spec, *command[1:], cwd=tmp_path), "single.toml:4", 'node "a": has no edges',
            "add a second [[node]]")
    assert not (tmp_path / "out").exists()


def test_a_network_named_after_a_verilog_keyword_is_refused(tmp_path):
    spec = tmp_path / "kw.toml"
    spec.write_text(PAIR.format(name="module"))
    refused(sfdf("generate", spec, "-o", tmp_path / "out"), "kw.toml:2: network.name", "Verilog keyword",
            'name = "module_net"')


def test_nodes_named_after_verilog_keywords_stay_plain_identifiers(tmp_path):
    """A node's name is only ever part of a port's or an instance's name (``s_axis_module_tdata``)."""
    spec = tmp_path / "kw.toml"
    spec.write_text(PAIR.format(name="kw").replace('"a"', '"module"').replace('"b"', '"wire"'))
    run = sfdf("generate", spec, "-o", tmp_path / "out")
    assert run.returncode == 0, run.stderr
    verilog = (tmp_path / "out" / "kw.v").read_text()
    assert "s_axis_module_tdata" in verilog and "m_axis_wire_tdata" in verilog
    assert "\\module" not in verilog and "\\wire" not in verilog


def test_a_byte_order_mark_is_accepted(tmp_path):
    spec = tmp_path / "bom.toml"
    spec.write_bytes(b"\xef\xbb\xbf" + PAIR.format(name="bom").encode())
    run = sfdf("check", spec, "--json")
    assert run.returncode == 0 and '"deadlock_free": true' in run.stdout, run.stderr
