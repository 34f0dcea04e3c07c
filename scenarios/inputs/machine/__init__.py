"""A real machine's ``/proc`` and ``/sys``, read for ``stacksim probe``: :mod:`.tree` (the files, on the
machine or in a saved tree, and saving what was read), :mod:`.read` (the facts they state)."""
