"""The suite run: a suite manifest planned as store stages, from a git commit to a verified publication.

``plan.py`` makes the plan; each stage it adds beyond the packaging, sandbox and agent stages lives here in a
module named after it (``grade``, ``paired_record``, ``admit``, ``bundle``, ``publish``, ``analyze``, ``report``);
``catalogue.py`` composes every stage, public contract, plan builder and service.
"""

__all__: list[str] = []
