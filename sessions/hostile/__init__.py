"""Hostile input: every file and every byte an agent sends is untrusted until checked here.

- ``safe_files``: bounded, validated reads of user and agent files (one clear line on a bad one).
- ``inert_text``: text made inert before it reaches a terminal, a log or a report.
- ``redact``: secrets (keys, passwords, tokens inside URLs) removed before anything is written.
"""
