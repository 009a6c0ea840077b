"""Running a planned batch on a Ray cluster (`cutin simulate --ray`).

- ``placement``: the CPU cost of one call and how many calls each node takes (pure).
- ``worker``: what runs on a node: one call in a scratch folder, its log and audio
  read back as bytes (no Ray import: the actor's body).
- ``connect``: attaching to (or starting) Ray, with one-line errors.
- ``dispatch``: the driver's loop: actors per node, calls to free slots, a lost node's
  calls rerun or filed as failed, every result filed into ``--out`` by
  :func:`sessions.batch.filing.file_parts`.

``ray`` is imported only inside these modules' functions (the ``cluster`` extra).
"""
