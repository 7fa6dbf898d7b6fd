"""Which PNG files in a results or sweep directory are figures netsim wrote, and whether its
report.html is netsim's (standard library only: a sweep without figures, and PyPy, read it
without numpy or matplotlib)."""
from __future__ import annotations

import contextlib
import os
import stat
import struct
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"   # every PNG file's first eight bytes (plot_tool.png writes it)
SOFTWARE = "netsim plot_tool"   # the start of every figure's "Software" text (plot_tool.png)
# how every report page netsim writes begins (plot_tool.report_page `render_page`): its
# <!DOCTYPE>, and its <title> within the first REPORT_TITLE_WITHIN bytes
REPORT_HEAD = b"<!DOCTYPE html>"
REPORT_TITLE = b"<title>netsim report: "
REPORT_TITLE_WITHIN = 512


@contextlib.contextmanager
def naming_errors(path):
    """An OSError raised inside names `path`, the file being written, not a temporary name
    (a full disk's ENOSPC names no file at all), so that its one line can say which file."""
    try:
        yield
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc


def is_netsims_report(head: bytes) -> bool:
    """Whether a file beginning with `head` is a report page netsim wrote."""
    return head.startswith(REPORT_HEAD) and REPORT_TITLE in head[:REPORT_TITLE_WITHIN]


def report_written_by_netsim(path) -> bool:
    """Whether `path` is a regular file (not a symbolic link) holding a report page netsim
    wrote, or nothing (nothing to lose), which netsim may replace or remove. Anything else is
    the user's."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(REPORT_TITLE_WITHIN)
    except OSError:
        return False
    return not head or is_netsims_report(head)


def foreign_report(path) -> bool:
    """Whether something is at `path` (a file, or a symbolic link) that is not a report page
    netsim wrote: a report must not be written there."""
    path = Path(path)
    return (path.exists() or path.is_symlink()) and not report_written_by_netsim(path)


def file_kind(path) -> str:
    """What is at `path` when it is not a regular file, in words for an error line: "missing",
    "a directory", "a device", "a named pipe", "a socket" or "not a regular file" ("a regular
    file" when it is one). Symbolic links are followed."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):           # missing, a NUL in the name, too long...
        return "missing"
    return ("a regular file" if stat.S_ISREG(mode) else
            "a directory" if stat.S_ISDIR(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
            "a named pipe" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def written_by_netsim(path) -> bool:
    """Whether `path` is a regular file (not a symbolic link) holding a PNG whose "Software"
    text, before its image data, starts with `SOFTWARE`: a figure netsim wrote, which netsim may
    replace or remove. Anything else in a results or sweep directory is the user's."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            if fh.read(8) != SIGNATURE:
                return False
            for _ in range(64):                     # the chunks before IDAT
                head = fh.read(8)
                if len(head) < 8:
                    return False
                length, kind = struct.unpack(">I4s", head)
                if kind in (b"IDAT", b"IEND") or length > 1 << 20:
                    return False
                data = fh.read(length)
                fh.read(4)                          # (its CRC)
                if kind == b"tEXt" and data.startswith(b"Software\0"):
                    return data[9:].decode("latin-1").startswith(SOFTWARE)
    except OSError:
        return False
    return False


def refuse_foreign_figures(paths) -> None:
    """ValueError naming the first of `paths` that exists (or is a symbolic link) and is not a
    figure netsim wrote: checked before anything is drawn, so that nothing is written when
    netsim would replace a file of the user's, or write through a link."""
    for path in paths:
        path = Path(path)
        if (path.exists() or path.is_symlink()) and not written_by_netsim(path):
            raise ValueError(f"{path}: exists and is not a figure netsim wrote (a file of "
                             f"yours, or a symbolic link): move it, or draw into another "
                             f"directory")


__all__ = ["SIGNATURE", "SOFTWARE", "file_kind", "foreign_report", "is_netsims_report",
           "refuse_foreign_figures",
           "report_written_by_netsim", "written_by_netsim"]
