"""The Textual app and the command line. The only package that imports Textual.

Its children import one way: ``cli`` -> ``screens`` -> ``widgets`` -> ``views``, and
``calls`` (a live call's setup and driver) below ``cli`` and ``screens``; none imports
this top level (tests/test_package_cycles.py)."""

from sessions.version import version_string

__version__ = version_string()
