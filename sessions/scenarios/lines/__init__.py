"""Scenarios for a black-box agent on a line (``--agent twilio:ws://…`` and the other
lines): the caller's side only. cutin does not speak for such an agent, so nothing here
names it or scripts what it says; a call to a line uses ``line-check`` unless
``--scenario`` asks for another."""
