"""The stages: one module per stage, each named after its stage (hyphens become underscores).

A stage module declares the stage (:func:`~bench.builder.stage`) and wires its ports to the logic, which lives in its
domain package (packaging, sandbox, agent, grading, analysis, publish). The builder itself is :mod:`bench.builder`.
"""

__all__: list[str] = []
