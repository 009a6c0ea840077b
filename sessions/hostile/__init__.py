"""sessions.hostile."""
