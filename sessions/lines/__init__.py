"""Lines to black-box voice agents: audio in both directions and nothing else.

cutin cannot stop such an agent; it plays the caller's side of a phone line (or a
speech-to-speech client), barges in, and measures what the agent does. Modules:

- ``base``: the :class:`~sessions.lines.base.Line` protocol, its notices and errors,
  the :class:`~sessions.lines.base.LineLimits`, the close-code rule, and the
  :class:`~sessions.lines.base.PlayoutBuffer` that plays agent audio at real time.
- ``socket_line``: what every WebSocket line shares (reader/writer threads, states,
  limits, close codes); ``notices``: its notice queue and the wording of failures.
- ``codec``: G.711 μ-law and streaming resampling between the line's rate and 16 kHz.
- ``twilio``: Twilio Media Streams over a WebSocket (cutin is Twilio's side).
- ``realtime``: OpenAI Realtime through the ``openai`` package (cutin is the client
  app); ``realtime_items``: its barge-in bookkeeping.
- ``sip``: a real SIP call (``sip:USER@HOST``) through PJSIP in a worker process
  (the ``sip`` package: ``worker``, ``stack``, ``wire``; ``uri`` parses the address
  and the optional account, ``words`` says why a call failed).
- ``registry``: one entry per transport (``--agent`` form, status label, key, builder);
  ``factory``: ``--agent twilio:ws://...`` / ``realtime`` → a :class:`Line`.

Heavy imports (websockets, openai) happen inside the transports, never here or in the
registry.
"""
