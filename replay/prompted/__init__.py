"""``cutin positions`` and ``cutin prompt-audit``: the frozen caller-reply positions
(:mod:`.positions`, :mod:`.positions_io`) and the prompted-versus-injected
disfluency audit over them (:mod:`.prompt_audit`, replies cached by
:mod:`.reply_cache`)."""
