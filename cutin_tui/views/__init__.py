"""What the screens and widgets show, computed without Textual: the live call's view
model (transcript, timeline, decision, counts, line status), the replay's turn table
and its navigation. Imports nothing else of cutin_tui."""
