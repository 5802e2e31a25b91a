"""What the ``sfdf`` commands read: a spec file, and ``--input`` frame files (one frame per line)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from sfdf.gen.errors import InputError
from sfdf.gen.spec import parse_spec

__all__ = ["WORD", "load_spec_file", "output_file", "output_folder", "read_frames", "read_text", "separate_folders"]

#: An unsigned decimal integer.
WORD = re.compile(r"[0-9]+\Z")
_FRAMES_FIX = "write unsigned decimal integers separated by spaces, one frame per line"


def read_text(path: str, argument: str) -> str:
    """The UTF-8 text of ``path`` (a one-line :class:`InputError` naming ``argument`` when it cannot be read)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, argument, f"not UTF-8 text (byte {exc.start})", "save the file as UTF-8") from None
    except OSError as exc:
        raise InputError(path, argument, f"cannot read: {exc.strerror}", "check the path") from None


def output_folder(path: str, argument: str) -> Path:
    """``path`` as a folder the command may write into, created if missing (a one-line :class:`InputError`
    when it is a file or cannot be created or written), before any work is done."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise InputError(path, argument, "is a file, not a folder", "choose a folder (it is created if missing)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(path, argument, f"cannot create it: {exc.strerror}", "choose a writable folder") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(path, argument, "is not writable", "choose a writable folder")
    return folder


def output_file(path: str, argument: str) -> Path:
    """``path`` as a file the command may write (its folder exists and is writable, and it is not a folder),
    checked before any work: a build of half an hour never fails at its last step for a bad path."""
    file = Path(path)
    if file.is_dir():
        raise InputError(path, argument, "is a folder", "name the file to write")
    folder = file.parent
    if not folder.is_dir():
        raise InputError(path, argument, f"its folder {str(folder)!r} does not exist", "create it, or choose another file")
    if not os.access(folder, os.W_OK | os.X_OK) or (file.exists() and not os.access(file, os.W_OK)):
        raise InputError(path, argument, "cannot be written", "choose a writable place")
    return file


def separate_folders(input_path: str, output_path: str) -> None:
    """``--output`` is neither ``--input`` nor inside it, and ``--input`` not inside the results the job
    overwrites: the job never writes into its own input (local paths; a URI is the cluster's to check)."""
    source, target = Path(input_path).resolve(), Path(output_path).resolve()
    if target == source or target.is_relative_to(source):
        raise InputError(output_path, "--output", f"is {'--input' if target == source else 'inside --input'} "
                         f"({input_path})", "write the results to a folder outside the input")
    for overwritten in ("results", "checkpoint"):
        if source.is_relative_to(target / overwritten):
            raise InputError(input_path, "--input", f"is inside --output's {overwritten}/, which the job overwrites",
                             "move the input, or choose another --output")


def load_spec_file(path: str):
    """The validated network of the spec at ``path`` (a one-line :class:`UserError` when it is not valid); an
    SDF network (004) also passes the SDF rules (:func:`sfdf.gen.sdf.check.check_sdf_spec`)."""
    text = read_text(path, "SPEC")
    network = parse_spec(text, path)
    if network.is_sdf:
        from sfdf.gen.sdf.check import check_sdf_spec

        check_sdf_spec(network, text)
    return network


def read_frames(path: str, width: int) -> list[list[int]]:
    """Read an input frame file: one frame per line, whitespace-separated unsigned integers.

    Blank lines and lines starting with ``#`` are skipped.

    Parameters
    ----------
    path : str
        The file.
    width : int
        Bits per word (the sources' port width): every word must be below ``2**width``.

    Returns
    -------
    list of list of int
        The frames in file order, each of at least one word.

    Raises
    ------
    InputError
        For an unreadable file, a word that is not an unsigned integer or does not fit, or no frames.
    """
    frames = []
    for number, line in enumerate(read_text(path, "--input").splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        for position, word in enumerate(words, 1):
            if not WORD.match(word):
                raise InputError(path, f"word {position}", f"{json.dumps(word)} is not an unsigned integer",
                                 _FRAMES_FIX, number)
            if int(word) >> width:
                raise InputError(path, f"word {position}", f"{word} does not fit in {width} bits",
                                 f"use words below 2**{width} (the source port's width)", number)
        frames.append([int(word) for word in words])
    if not frames:
        raise InputError(path, "--input", "no frames", _FRAMES_FIX)
    return frames
