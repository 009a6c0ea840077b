"""sessions.lines.sip."""
