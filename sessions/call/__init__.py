"""The live call: one engine (:class:`CallEngine`: frames -> pause detector -> policies ->
acts -> log) driving a far end (a simulated agent, or a black-box agent on a line).

No Textual here. The engine runs on a virtual clock (tests, batch runs) or in real
time on its own thread (the app), and reports everything as session-log events to
its listeners; the app feeds commands in through a thread-safe queue.

This file imports nothing: the parts below it import this package's modules, so it
must not import theirs (tests/test_package_cycles.py). Import from the module that
holds a name: ``sessions.call.engine.engine.CallEngine``,
``sessions.call.setup.simulated_call.simulated_call``, ``sessions.call.commands``.
"""
