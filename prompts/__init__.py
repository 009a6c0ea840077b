"""Every word cutin sends to an LLM, as template files plus small render functions.

Templates live in ``prompts/templates/<name>.txt``. A template may open with comment
lines starting with ``#`` (where the text comes from, what it is for); they and the one
blank line after them are never sent. Placeholders are ``{identifier}``; any other
brace (a JSON example, say) is left alone. :func:`render` fails loudly on a missing or
an unused variable, so a renamed placeholder cannot silently drop text.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@cache
def _raw(name: str) -> str:
    path = resources.files(__name__).joinpath("templates", f"{name}.txt")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyError(f"no prompt template named {name!r}") from None


def template_header(name: str) -> str:
    """The comment header of template ``name`` (citation and notes), without the ``#``."""
    lines = []
    for line in _raw(name).splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].removeprefix(" "))
    return "\n".join(lines)


def load_template(name: str) -> str:
    """The body of template ``name``: the file minus its comment header."""
    lines = _raw(name).splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("#"):
        i += 1
    if i and i < len(lines) and not lines[i].strip():
        i += 1  # the blank line that separates header and body
    return "".join(lines[i:]).rstrip("\n")


def placeholders(name: str) -> set[str]:
    """Names of the ``{placeholders}`` in template ``name``."""
    return set(_PLACEHOLDER.findall(load_template(name)))


def render(name: str, **variables: str) -> str:
    """Template ``name`` with every ``{placeholder}`` replaced by its variable."""
    body = load_template(name)
    wanted = set(_PLACEHOLDER.findall(body))
    missing = wanted - variables.keys()
    if missing:
        raise KeyError(f"template {name!r} needs {', '.join(sorted(missing))}")
    unused = variables.keys() - wanted
    if unused:
        raise ValueError(f"template {name!r} has no placeholder {', '.join(sorted(unused))}")
    return _PLACEHOLDER.sub(lambda m: variables[m.group(1)], body)


def template_names() -> list[str]:
    """All shipped template names (file names without ``.txt``)."""
    folder = resources.files(__name__).joinpath("templates")
    return sorted(
        entry.name.removesuffix(".txt") for entry in folder.iterdir() if entry.name.endswith(".txt")
    )


__all__ = ["load_template", "placeholders", "render", "template_header", "template_names"]
