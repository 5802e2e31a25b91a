"""SDF networks (004) on the fast simulated device (sw/device/sdf.py): 004's example and the radio, with
their teleport messages, through the child process and in-process, firings sent in two batches under
random back-pressure and source pauses, every sink value against the SDF model with the same capacities;
a network whose capacities deadlock times out with the values it gave; the board backend and a firing
without every source's word are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sfdf.gen.sdf.kernels import stimulus
from sfdf.gen.sdf.model import run_sdf
from sfdf.gen.spec import load_spec
from sfdf.sw.device import DeviceError, FrameTimeout, SDFDevice, open_device

REPO = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("SFDF_FASTSIM_BUILD", REPO / "build" / "fastsim"))
EXAMPLES = REPO / "examples"


@pytest.mark.parametrize(("spec", "firings", "process"), [("teleport.toml", 100, True), ("teleport.toml", 100, False),
                                                          ("fhr.toml", 5120, True)])
def test_sdf_networks_match_the_model(spec, firings, process):
    net = load_spec(EXAMPLES / spec)
    ((source, words),) = stimulus(net, firings).items()  # the radio's antenna: its hopping carrier
    run = run_sdf(net, source_firings=firings, bounded=True, words={source: words})
    assert run.deliveries  # the messages change the values from their firing on
    with open_device(EXAMPLES / spec, build_dir=BUILD, process=process, backpressure=0.3, idle=0.2) as device:
        assert isinstance(device, SDFDevice)
        if spec == "fhr.toml":  # the device's default stimulus, the antenna's hopping input, in two parts
            device.fire(firings // 2)
            early = device.run()
            device.fire(firings - firings // 2)
        else:
            device.fire(words[:firings // 2])
            early = device.run()
            device.fire(words[firings // 2:])
        late = device.run()
    assert {sink: early[sink] + late[sink] for sink in early} == run.outputs


def test_deadlocking_capacities_time_out_and_keep_what_came(tmp_path):
    spec = tmp_path / "skew.toml"  # A -> D must hold what A sends while B gathers 3: 2 places deadlock
    spec.write_text('[network]\nname = "skew"\n' + "".join(f'[[node]]\nname = "{n}"\n' for n in "ABD") + "".join(
        f'[[edge]]\nfrom = "{a}"\nto = "{b}"\ncapacity = {c}\n{rates}\n'
        for a, b, c, rates in [("A", "B", 4, "pop = 3"), ("B", "D", 4, "push = 3"), ("A", "D", 2, "")]))
    from sfdf.hdl.generate import generate

    _, manifest = generate(load_spec(spec), tmp_path / "out", allow_unsafe=True)
    with open_device(manifest, build_dir=BUILD, timeout_cycles=20_000) as device:
        device.fire(list(range(12)))
        with pytest.raises(FrameTimeout, match="sfdf check names the edge") as caught:
            device.run()
    assert caught.value.values == {"D": []}


def test_what_an_sdf_device_refuses(tmp_path):
    with pytest.raises(DeviceError, match="runs on the simulated device only"):
        open_device(EXAMPLES / "teleport.toml", "serial:/dev/null")
    with open_device(EXAMPLES / "teleport.toml", build_dir=BUILD) as device, \
            pytest.raises(DeviceError, match="at least one firing's word for each source"):
        device.fire([])
