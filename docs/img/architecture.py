"""Draws docs/img/architecture.png, the layer picture of docs/architecture.md: python docs/img/architecture.py"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

#: (name, folder, what it holds, x, y) of each layer; arrows point from a layer to those it imports.
LAYERS = {
    "cli": ("sfdf.cli", "sfdf/cli/", "the sfdf command: parses, dispatches, prints", 5.0, 7.2),
    "spark": ("sfdf.sw.spark", "sw/spark/", "the Spark job: config, executor, runs, checks, storage", 5.0, 6.1),
    "device": ("sfdf.sw.device", "sw/device/", "open_device, Device, codec, links (sim, process, UART)", 5.0, 5.0),
    "sim": ("sfdf.sw.sim", "sw/sim/", "the simulated device: harness, build, fastsim, boardsim", 2.6, 3.9),
    "cosim": ("sfdf.cosim", "cosim/", "verification: cocotb, scoreboard, watchdog, formal/", 7.4, 3.9),
    "boards": ("sfdf.boards", "boards/", "host link + packets, board tops, build", 5.0, 2.8),
    "hdl": ("sfdf.hdl", "hdl/", "Amaranth blocks, plan, NetworkTop -> Verilog + manifest", 5.0, 1.7),
    "gen": ("sfdf.gen", "gen/", "spec, model, analysis, refmodel, sdf (004)", 5.0, 0.6),
}
IMPORTS = [("cli", "spark"), ("spark", "device"), ("device", "sim"), ("sim", "boards"),
           ("cosim", "boards"), ("boards", "hdl"), ("hdl", "gen")]


def main() -> None:
    fig, ax = plt.subplots(figsize=(9, 7.6))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 8.3)
    ax.axis("off")
    width, height = 4.2, 0.72
    for name, folder, what, x, y in LAYERS.values():
        ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.02",
                                    facecolor="#e8f0fb" if name != "sfdf.hdl" else "#fbeee0", edgecolor="#345"))
        ax.text(x, y + 0.12, f"{name}   ({folder})", ha="center", va="center", fontsize=11, weight="bold")
        ax.text(x, y - 0.17, what, ha="center", va="center", fontsize=8.5)
    for a, b in IMPORTS:
        (xa, ya), (xb, yb) = LAYERS[a][3:], LAYERS[b][3:]
        ax.add_patch(FancyArrowPatch((xa + (xb - xa) * 0.25, ya - height / 2), (xb - (xb - xa) * 0.25, yb + height / 2),
                                     arrowstyle="-|>", mutation_scale=14, color="#345"))
    ax.text(9.9, 1.7, "writes <name>.v\n+ <name>.json\n(the manifest)", ha="right", va="center", fontsize=8.5,
            style="italic", color="#963")
    ax.text(0.1, 8.25, "Each wing imports only the wings below it (arrows); lint-imports checks it in make test.\n"
            "Nothing in sw imports sfdf.cosim; sw/stm/ (001) imports neither sw.device nor sw.spark.",
            fontsize=9, va="top")
    fig.tight_layout()
    fig.savefig(Path(__file__).with_suffix(".png"), dpi=110)


if __name__ == "__main__":
    main()
