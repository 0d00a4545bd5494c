"""ARCHITECTURE.md's data-flow diagram names, for every stage in the catalogue, the module that declares it, and
that module is named after the stage."""

from __future__ import annotations

import re
from pathlib import Path

from bench.run.catalogue import STAGES

REPO = Path(__file__).resolve().parents[1]


def _diagram() -> str:
    text = (REPO / "ARCHITECTURE.md").read_text()
    section = text.split("## Data flow of one suite run", 1)[1]
    return section.split("```", 2)[1]


def test_every_stage_lives_in_a_module_named_after_it_and_the_diagram_names_it() -> None:
    diagram = _diagram()
    named = set(re.findall(r"bench/[a-z_/]+\.py", diagram))
    for declared in STAGES:
        path = declared.module.replace(".", "/") + ".py"
        assert Path(path).stem == declared.name.replace("-", "_"), f"stage {declared.name} lives in {path}"
        assert path in named, f"the data-flow diagram does not name {path} for stage {declared.name}"
        arrow = re.search(f"─{re.escape(declared.name)}[─ ]", diagram)
        assert arrow, f"the data-flow diagram has no arrow for stage {declared.name}"
