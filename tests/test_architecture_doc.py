"""ARCHITECTURE.md is a map that stays true: its data-flow diagram names, for every stage in the catalogue, the
module that declares it (named after the stage); it stays at most 350 lines, with an "Extending" section holding a
recipe per seam; and every ``bench/...`` path it names exists."""

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


def _text() -> str:
    return (REPO / "ARCHITECTURE.md").read_text()


def test_the_map_stays_a_map_of_at_most_350_lines() -> None:
    lines = _text().splitlines()
    where = "reasoning to docs/, history to benchmarks/RESULTS.md"
    assert len(lines) <= 350, f"ARCHITECTURE.md has {len(lines)} lines; move {where}"


def test_the_map_says_how_to_extend_each_seam() -> None:
    section = _text().split("\n## Extending\n", 1)
    assert len(section) == 2, "ARCHITECTURE.md has no '## Extending' section"
    body = section[1].split("\n## ", 1)[0]
    for seam in ("A stage.", "A store backend.", "A sandbox backend.", "A harness.", "A memory system."):
        assert f"**{seam}**" in body, f"the Extending section has no recipe for {seam.rstrip('.').lower()}"


def test_every_bench_path_the_map_names_exists() -> None:
    named = set(re.findall(r"bench/[A-Za-z0-9_./-]*[A-Za-z0-9_/]", _text()))
    assert named, "the map names no bench/ path"
    missing = sorted(path for path in named if not (REPO / path).exists())
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"
