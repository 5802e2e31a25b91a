"""Line numbers for spec error messages: where a table or key sits in the TOML text.

``tomllib`` reports lines only for syntax errors; semantic errors (a bad capacity, an unknown node)
find their line here by scanning the text. Good enough for messages, never used for parsing.
"""

from __future__ import annotations

import re

__all__ = ["SpecLines"]

_HEADER = re.compile(r"\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def _key_pattern(*parts: str) -> re.Pattern:
    keys = r"\s*\.\s*".join(rf"[\"']?{re.escape(p)}[\"']?" for p in parts)
    return re.compile(rf"\s*{keys}\s*[=.]")


class SpecLines:
    """Finds the line of a table or key in the spec text: good enough for error messages."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.headers = []  # (line number, is array, dotted name without spaces or quotes)
        for number, line in enumerate(self.lines, 1):
            match = _HEADER.match(line)
            if match:
                name = re.sub(r"[\s\"']", "", match.group(2))
                self.headers.append((number, match.group(1) == "[[", name))

    def _search(self, pattern: re.Pattern, start: int, end: int) -> int | None:
        for number in range(start, end):
            if pattern.match(self.lines[number - 1]):
                return number
        return None

    def _region(self, table: str, index: int | None) -> tuple[int, int] | None:
        """Lines ``[start, end)`` of ``[table]`` or of the ``index``-th ``[[table]]``."""
        starts = [n for n, array, name in self.headers if name == table and array == (index is not None)]
        if index is None and not starts:
            first = self.headers[0][0] if self.headers else len(self.lines) + 1
            line = self._search(_key_pattern(table), 1, first)
            return None if line is None else (line, line + 1)
        if index is not None and index >= len(starts):
            return None
        start = starts[index or 0]
        later = [n for n, _, name in self.headers if n > start and not name.startswith(table + ".")]
        return start, later[0] if later else len(self.lines) + 1

    def find(self, table: str, index: int | None = None, path: tuple[str, ...] = ()) -> int | None:
        """The line of key ``path`` in ``[table]`` (``index`` None) or the ``index``-th ``[[table]]``."""
        region = self._region(table, index)
        if region is None:
            return None
        start, end = region
        if not path:
            return start
        line = self._search(_key_pattern(*path), start + 1, end)
        if line is None and len(path) > 1:
            sub = [n for n, _, name in self.headers if start < n < end and name == f"{table}.{path[0]}"]
            if sub:
                line = self._search(_key_pattern(*path[1:]), sub[0] + 1, end) or sub[0]
        if line is None:
            line = self._search(_key_pattern(path[0]), start + 1, end)
        return line or start

    def key_line(self, table: str, index: int | None, key: str) -> int | None:
        """The line of ``key`` written in ``[table]`` or the ``index``-th ``[[table]]`` itself (not in a
        sub-table), or None."""
        region = self._region(table, index)
        if region is None:
            return None
        start, end = region
        inner = [n for n, _, name in self.headers if start < n < end]
        return self._search(_key_pattern(key), start + 1, inner[0] if inner else end)

    def top(self, key: str) -> int | None:
        """The line of an unknown top-level key or table."""
        for number, _, name in self.headers:
            if name == key or name.startswith(key + "."):
                return number
        region = self._region(key, None)
        return region[0] if region else None
