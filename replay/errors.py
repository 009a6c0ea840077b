"""The one error replay raises for input it cannot read."""

from __future__ import annotations

from sessions.hostile.safe_files import FileError


class LoadError(FileError):
    """A file or directory that cannot be loaded; the message names it and says
    what was expected instead."""


__all__ = ["LoadError"]
