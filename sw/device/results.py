"""What a device hands back: each frame's :class:`FrameResult`, and the errors that carry those answered before.

Every error of a device call is a :class:`DeviceError`. The ones raised while results were waiting to
be returned hand them over in ``error.results``, so an answered frame is never lost:
:class:`FrameTimeout` (a frame over its cycle budget; it stays pending), :class:`DeviceDied` (the
device stopped answering) and :class:`ProtocolError` (beats that do not fit the frames sent). The
session that raises them is :class:`sfdf.sw.device.session.Device`; users import them from
:mod:`sfdf.sw.device`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .codec import Beat

__all__ = ["DeviceDied", "DeviceError", "FrameResult", "FrameTimeout", "ProtocolError"]


@dataclass(frozen=True)
class FrameResult:
    """The results of one input frame.

    Members
    -------
    frame_id : int
        The caller's id.
    frame : int
        Its position in the device's stream (0, 1, ...).
    beats : dict of str to tuple of Beat
        Per sink node, the frame's data beats in order (decoded by :mod:`sfdf.sw.device.codec`).
    cycle : int or None
        The cycle at which its last frame end arrived (simulated devices).
    """

    frame_id: int
    frame: int
    beats: Mapping[str, tuple[Beat, ...]]
    cycle: int | None = None

    @property
    def fields(self) -> dict[str, int]:
        """The fields of the frame's one data beat (the variance network: ``n``, ``sum``, ``sum_sq``).

        Raises
        ------
        ValueError
            The network has several sinks, or the frame gave other than one data beat (filtering
            networks: use :attr:`beats`).
        """
        if len(self.beats) != 1:
            raise ValueError(f"frame {self.frame_id}: {len(self.beats)} sinks ({', '.join(self.beats)}); use .beats")
        (beats,) = self.beats.values()
        if len(beats) != 1:
            raise ValueError(f"frame {self.frame_id}: {len(beats)} data beats, not one; use .beats")
        return dict(beats[0].fields)

    def data(self, sink: str | None = None) -> list[dict[str, int]]:
        """The fields of every data beat at ``sink`` (``None``: the only sink)."""
        if sink is None:
            if len(self.beats) != 1:
                raise ValueError(f"frame {self.frame_id}: name one of the sinks {', '.join(self.beats)}")
            (sink,) = self.beats
        return [dict(beat.fields) for beat in self.beats[sink]]


class DeviceError(RuntimeError):
    """A device call failed.

    Members
    -------
    frame_id : int or None
        The frame the failure concerns.
    results : list of FrameResult
        Results answered before the failure and not yet returned: handed over here.
    """

    def __init__(self, message: str, frame_id: int | None = None, results: list[FrameResult] | None = None):
        super().__init__(message)
        self.frame_id = frame_id
        self.results = results or []


class FrameTimeout(DeviceError):
    """A frame's results did not appear within the cycle budget; the frame stays pending."""


class DeviceDied(DeviceError):
    """The device stopped answering (its simulator process exited or was killed)."""


class ProtocolError(DeviceError):
    """The device sent beats that do not fit the frames sent (a frame end out of order, a beat too many)."""
