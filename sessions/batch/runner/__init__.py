"""sessions.batch.runner."""
