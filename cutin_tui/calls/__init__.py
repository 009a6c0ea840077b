"""A live call for the TUI: :mod:`call_setup` opens the call a :class:`~sessions.plan.CallPlan`
asks for and :mod:`call_driver` runs it on its clock (a thread, or the virtual clock)
and hands the screen its events. No Textual."""
