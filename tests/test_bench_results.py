"""docs/results.md holds, between each bench's markers, exactly what that bench makes from its committed
docs/<bench>.json (bench/results.py): no figure there is typed by hand, and none is stale."""

import copy
import re

import pytest

from benches import load_bench
from results import RESULTS, between, data_path, load, markers

#: Every bench that publishes into docs/results.md (bench/fpga.py has its own tests, tests/test_bench_fpga.py).
BENCHES = ["analysis", "dummies", "throughput", "hop", "channels", "formal", "cosim", "host", "cluster", "sdep",
           "stm", "fhr"]


@pytest.mark.parametrize("bench", BENCHES)
def test_the_results_page_is_what_the_json_makes(bench):
    made = load_bench(bench).sections(load(bench))
    text = RESULTS.read_text()
    for section, body in made.items():
        assert between(text, *markers(bench, section)) == body, f"docs/results.md's {section!r}: run bench/{bench}.py --tables"
    opened = set(re.findall(rf"<!-- ([^:>]+): bench/{bench}\.py writes between these markers -->", text))
    assert opened == set(made), f"markers of bench/{bench}.py without a section: {opened - set(made)}"


def test_the_readmes_radio_headline_is_what_the_json_makes():
    from results import ROOT

    made = load_bench("fhr").sections(load("fhr"))["fhr headline"]
    assert between((ROOT / "README.md").read_text(), *markers("fhr", "fhr headline")) == made, \
        "README's radio headline: run bench/fhr.py --tables"


def test_every_publishing_bench_is_checked():
    text = RESULTS.read_text()
    named = set(re.findall(r"<!-- [^:>]+: bench/(\w+)\.py writes between these markers -->", text))
    assert named - {"fpga"} == set(BENCHES)
    assert all(data_path(bench).is_file() for bench in BENCHES)


def test_a_changed_figure_changes_its_table():
    """The check above can fail: a figure edited in the JSON is no longer what the page says."""
    dummies = load_bench("dummies")
    data = copy.deepcopy(load("dummies"))
    data["blast"][0]["naive"]["dummies"] += 1
    edited = dummies.sections(data)["dummies blast"]
    assert edited != between(RESULTS.read_text(), *markers("dummies", "dummies blast"))
