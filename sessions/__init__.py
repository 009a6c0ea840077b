"""A call while it runs and the log it leaves.

Holds the session-log schema, writer and reader (``sessions.log``), and — as they
land — the call loop, agent connectors and speech I/O. Never imports Textual.
"""
