"""cutin's own session logs (``cutin.session/1``) → the replay model
(:mod:`.session_import`); the τ2-bench format is :mod:`replay.tau2`. The log's
fold and realized counts live below, in :mod:`sessions.log`."""
