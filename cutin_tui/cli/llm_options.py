"""The endpoint of the subcommands that call an LLM: ``--model`` and ``--base-url`` on
top of the settings, checked before any request so a missing key is a one-line error."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cutin_tui.cli import CliError

if TYPE_CHECKING:
    from sessions.llm_client import LLMConfig
    from sessions.settings import Settings


def llm_config(settings: Settings, args: argparse.Namespace, **overrides: Any) -> LLMConfig:
    """The settings' LLM config with ``args.model``/``args.base_url`` winning; a CliError
    when there is neither an API key nor a local endpoint."""
    from sessions.llm_client import LLMConfig, LLMError

    config = LLMConfig.from_settings(
        settings, model=args.model, base_url=args.base_url, **overrides
    )
    try:
        config.resolved_key()
    except LLMError as exc:
        raise CliError(str(exc)) from None
    return config
