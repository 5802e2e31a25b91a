"""The kernel library: every kernel a spec may name, with its parameters (DESIGN.md, "Spec format").

The spec parser validates ``params`` against this table; the reference model (:mod:`gen.refmodel.kernels`)
and, later, the hardware generator implement the kernels named here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KERNELS", "KernelParam"]


@dataclass(frozen=True)
class KernelParam:
    """One kernel parameter: its type, default and inclusive range.

    Members
    -------
    kind : type
        ``int`` or ``float`` (a TOML integer is accepted for a float; a boolean never is).
    default : int or float
        Value when the spec leaves it out.
    low, high : int or float or None
        Inclusive bounds; ``None`` is unbounded.
    fix : str
        What the parameter means, for error messages.
    """

    kind: type
    default: int | float
    low: int | float | None
    high: int | float | None
    fix: str


#: The kernel library: kernel name -> parameter name -> :class:`KernelParam`.
KERNELS: dict[str, dict[str, KernelParam]] = {
    "random_filter": {
        "rate": KernelParam(float, 0.0, 0.0, 1.0, "use the probability that each output filters a token"),
        "seed": KernelParam(int, 1, 0, None, "use a non-negative LFSR seed"),
    },
    "variance_source": {},
    "variance_mean": {},
    "variance_mean_sq": {},
    "variance_join": {},
}
