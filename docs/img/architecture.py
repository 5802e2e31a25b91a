"""Draws docs/img/architecture.png, the layer picture of docs/architecture.md: python docs/img/architecture.py"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

#: (name, folder, what it holds, x, y) of each layer; arrows point from a layer to those it imports.
LAYERS = {
    "cli": ("sfdf.cli", "sfdf/cli/", "the sfdf command: parses, dispatches, prints", 5.0, 5.0),
    "sw": ("sfdf.sw", "sw/", "device API (simulated, board), codec, Spark job", 5.0, 3.9),
    "cosim": ("sfdf.cosim", "cosim/", "cocotb on Verilator, fast harness, build cache", 2.6, 2.8),
    "boards": ("sfdf.boards", "boards/", "host link + packets, board tops, build", 7.4, 2.8),
    "hdl": ("sfdf.hdl", "hdl/", "Amaranth blocks, NetworkTop -> Verilog + manifest", 5.0, 1.7),
    "gen": ("sfdf.gen", "gen/", "spec -> model -> analysis -> reference model", 5.0, 0.6),
}
IMPORTS = [("cli", "sw"), ("sw", "cosim"), ("sw", "boards"), ("cosim", "hdl"), ("boards", "hdl"), ("hdl", "gen")]


def main() -> None:
    fig, ax = plt.subplots(figsize=(9, 5.6))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 5.7)
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
    ax.text(0.1, 5.55, "Each layer imports only the layers below it (arrows); lint-imports checks it in make test.",
            fontsize=9, va="top")
    fig.tight_layout()
    fig.savefig(Path(__file__).with_suffix(".png"), dpi=110)


if __name__ == "__main__":
    main()
