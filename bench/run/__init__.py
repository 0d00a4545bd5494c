"""The suite run: a suite manifest planned as store stages, from a git commit to a verified publication.

``suite_plan.py`` makes the plan (with ``challenge_plan.py``, ``pools.py``, ``arm_memory.py``); the stages it adds
live in :mod:`bench.stages`, one module each; ``catalogue.py`` composes every stage, public contract, plan builder
and service; ``dodo.py`` is doit's entry; ``runner.py`` is the suite run as a library call (``run_suite``), which
``demo`` and ``run`` only parse for and render.
"""

__all__: list[str] = []
