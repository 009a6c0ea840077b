"""Judges: :mod:`replay.judges.rules` (deterministic, offline) and
:mod:`replay.judges.llm` (any OpenAI-compatible endpoint). Both return
:class:`replay.model.JudgeVerdict` lists; ``cutin judge`` appends them to the log."""
