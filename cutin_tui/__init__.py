"""The Textual app and the command line. The only package that imports Textual."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cutin")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+src"
