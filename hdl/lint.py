"""``<name>.vlt``: the Verilator configuration ``sfdf generate`` writes beside ``<name>.v``, so that

    verilator --lint-only -Wall DIR/<name>.vlt DIR/<name>.v

prints no warning. It waives only what Amaranth's Verilog (Yosys ``write_verilog`` of its RTLIL) always
triggers, each class with the reason it is not a fault, and nothing in hand-written Verilog next to it
(every waiver names the generated file). Amaranth's operators extend their operands to the operation's
width (zero for unsigned, sign for signed values) and Yosys leaves that extension to Verilog's own
context-sized rules, which extend the same way: WIDTHEXPAND is that extension. The board core
(``<name>.board.v``, ``sfdf build``) instantiates ECP5 primitives; lint it with their models, shipped in
``boards/sim/`` (``dp16kd.v``, ``mult18x18d.v``).
"""

from __future__ import annotations

__all__ = ["WAIVERS", "verilator_config"]

#: (rule, the message text it must match or "", the reason): every waiver of :func:`verilator_config`.
WAIVERS = (
    ("WIDTHEXPAND", "", ("Amaranth extends a narrower operand to the operation's width, and Yosys writes it "
                        "unextended (a constant at its own width, level == 1'h1; a 2-bit slot against a 3-bit "
                        "count); Verilog's context sizing extends it the same way")),
    ("WIDTHTRUNC", "*Logical operator LOGNOT*", ("Yosys writes 'no bit set' of a multi-bit value as !x, which "
                                                "is 1 exactly when every bit is 0")),
    ("UNUSEDSIGNAL", "", ("Amaranth keeps each port and layout whole: the fields a module does not read (a "
                         "token's index at a kernel, the bits of a stream a node ignores) stay unused")),
    ("PROCASSINIT", "", ("Amaranth gives each register its reset value as an initializer and assigns it again "
                        "in the process that resets it")),
    ("DECLFILENAME", "", "one file holds the network's modules, named <name>.<submodule> after the hierarchy"),
)


def verilator_config(verilog_name: str) -> str:
    """The ``.vlt`` text for the generated file ``verilog_name`` (module docstring)."""
    lines = ["`verilator_config", (f"// sfdf generate: the warnings Amaranth's Verilog always gives, waived for "
             f"{verilog_name} only (docs/hardware.md, \"Linting the Verilog\")")]
    for rule, match, reason in WAIVERS:
        lines.append(f"// {rule}: {reason}")
        lines.append(f'lint_off -rule {rule} -file "*{verilog_name}"' + (f' -match "{match}"' if match else ""))
    return "\n".join(lines) + "\n"
