"""The SIP line: a real SIP call through PJSIP in a worker process.

- ``line``: the :class:`~sessions.lines.base.Line` the call drives (registered as ``sip:``).
- ``uri``: the ``sip:USER@HOST[:PORT]`` form and its checks (stdlib only).
- ``worker``: the process that owns PJSIP; ``stack``: the PJSIP side inside it.
- ``wire`` / ``words``: what crosses between the two processes, and its wording.
"""
