"""sessions.call.setup."""
