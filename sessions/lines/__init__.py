"""Lines to black-box voice agents: audio in both directions and nothing else.

cutin cannot stop such an agent; it plays the caller's side of a phone line (or a
speech-to-speech client), barges in, and measures what the agent does. Modules:

- ``base``: the :class:`~sessions.lines.base.Line` protocol, its notices and errors, and
  the :class:`~sessions.lines.base.PlayoutBuffer` that plays agent audio at real time.
- ``codec``: G.711 μ-law and streaming resampling between the line's rate and 16 kHz.
- ``twilio``: Twilio Media Streams over a WebSocket (cutin is Twilio's side).
- ``realtime``: OpenAI Realtime through the ``openai`` package (cutin is the client app).
- ``factory``: ``--agent twilio:ws://...`` / ``realtime`` → a :class:`Line`.

Heavy imports (websockets, openai) happen inside the transports, never here.
"""
