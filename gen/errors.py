"""One-line errors for user mistakes: the file, the field, what is wrong and the fix.

The ``sfdf`` CLI prints ``sfdf: error: <str(error)>`` for any :class:`UserError` and exits with
status 2, never with a traceback (README, "The CLI").
"""

from __future__ import annotations

__all__ = ["InputError", "SpecError", "UserError"]


class UserError(Exception):
    """A mistake in a file the user wrote, reported in one line.

    ``str(error)`` is ``<file>:<line>: <field>: <problem>; <fix>``; ``:<line>`` is left out when
    the line is unknown.

    Parameters
    ----------
    file : str
        The file (path as given by the user) or ``"<memory>"``.
    field : str
        Where in the file: a dotted path such as ``edge[3].threshold`` or ``edge "uv".threshold``.
    problem : str
        What is wrong, with the value that was given.
    fix : str
        What to write instead.
    line : int or None
        1-based line number, when known.

    Members
    -------
    file, field, problem, fix, line
        As given.
    """

    def __init__(self, file: str, field: str, problem: str, fix: str, line: int | None = None):
        self.file = str(file)
        self.field = field
        self.problem = problem
        self.fix = fix
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.problem}; {self.fix}"

    def __reduce__(self):
        return type(self), (self.file, self.field, self.problem, self.fix, self.line)


class SpecError(UserError, ValueError):
    """An invalid topology spec (TOML syntax, schema, or graph structure)."""


class InputError(UserError, ValueError):
    """An invalid input data file (for example the frames given to ``sfdf simulate --input``)."""
