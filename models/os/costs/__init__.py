"""The cost tables: what each stretch of kernel code costs in cycles and instructions.

``bundle`` is the hot path's cost bundle (per-layer cycles of one uninterrupted stretch of code),
``tables`` the platform's ``kernel`` settings (:class:`~models.os.costs.tables.KernelCosts`, each
field's default sourced in its docstring) and the run's table of bundles built from them, ``memops``
the memory operations each kind of work touches, by kernel source directory.
"""
