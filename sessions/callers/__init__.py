"""sessions.callers."""
