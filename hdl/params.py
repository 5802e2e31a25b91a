"""Parameter checks shared by the hardware components (STYLE.md: the message says what must be true)."""

__all__ = ["check_integer"]


def check_integer(name: str, value, low: int = 0) -> None:
    """Raise ``TypeError`` unless ``value`` is an integer (not a bool) of at least ``low``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise TypeError(f"{name} must be an integer >= {low}, not {value!r}")
