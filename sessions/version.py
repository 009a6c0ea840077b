"""The installed cutin version (written into every log header)."""

from importlib.metadata import PackageNotFoundError, version


def version_string() -> str:
    try:
        return version("cutin")
    except PackageNotFoundError:  # a source tree without an install
        return "0.0.0+src"
