"""What a user does with the demo's results (issue 21, build items 3, 5 and 6): export the arms as an Inspect AI log
that Inspect itself reads, draw the published bundle's lineage with each shared object once, list attempts and
runs, and take the short digests those listings print back into other commands."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from demo_runs import DemoRuns, bench_command
from inspect_ai.log import read_eval_log

from bench.results import load_bundle

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

CHALLENGES = {"harbor-holds", "transaction-memo", "spreadsheet-export", "rule-letter-case"}
CONDITIONS = {"control", "reference", "server-memory", "memory-keeper", "static-notes"}
SYSTEMS = CONDITIONS - {"control"}


def _json(demo_runs: DemoRuns, *argv: str) -> dict[str, Any]:
    done = bench_command(demo_runs.project, "--json", *argv)
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = done.stdout.splitlines()
    result: dict[str, Any] = json.loads(line)
    return result


def test_export_inspect_writes_a_log_inspect_ai_reads_with_one_sample_per_arm(
    demo_runs: DemoRuns, tmp_path: Path
) -> None:
    exported = _json(demo_runs, "export", "inspect", str(demo_runs.published), "--log-dir", str(tmp_path / "logs"))
    log = read_eval_log(exported["log"])  # Inspect's own reader, as `inspect view` uses it
    assert log.status == "success" and log.samples is not None
    assert exported["samples"] == len(log.samples) == len(CHALLENGES) * len(CONDITIONS)  # one control per attempt
    assert {sample.metadata["condition"] for sample in log.samples} == CONDITIONS
    assert {str(sample.id).rsplit("-1-", 1)[0] for sample in log.samples} == CHALLENGES
    for sample in log.samples:
        assert set(sample.scores or {}) == {"verifier", "delivered", "used"}
        assert sample.messages and sample.messages[0].role == "user"  # the transcript, prompt first
    treated = [s for s in log.samples if s.id == "harbor-holds-1-reference"]
    assert treated and treated[0].scores["verifier"].value == "C"  # type: ignore[index]
    control = [s for s in log.samples if s.id == "harbor-holds-1-control"]
    assert control and control[0].scores["verifier"].value == "I"  # type: ignore[index]


def test_export_inspect_takes_the_published_ref_and_a_digest_prefix_too(demo_runs: DemoRuns, tmp_path: Path) -> None:
    by_ref = _json(demo_runs, "export", "inspect", "published/example", "--log-dir", str(tmp_path / "a"))
    refs = _json(demo_runs, "store", "ls")["refs"]
    short = refs["published/example"].split(":")[1][:12]
    by_prefix = _json(demo_runs, "export", "inspect", short, "--log-dir", str(tmp_path / "b"))
    assert by_ref["samples"] == by_prefix["samples"] == len(CHALLENGES) * len(CONDITIONS)
    assert Path(by_ref["log"]).read_bytes() == Path(by_prefix["log"]).read_bytes()  # the run's date, not today's


def test_lineage_of_the_published_bundle_names_each_shared_object_once_in_every_format(demo_runs: DemoRuns) -> None:
    graph = _json(demo_runs, "lineage", "published/example")
    objects, actions = graph["objects"], graph["actions"]
    assert {action["stage"] for action in actions.values()} >= {"corpus", "paired-attempt", "publish"}
    text = bench_command(demo_runs.project, "lineage", "published/example").stdout.splitlines()
    shown = [line for line in text if not line.rstrip().endswith("(above)") and "blake3:" in line]
    assert len(shown) == len(objects)  # each object's history once; a shared one is then named "(above)"
    for form, declared in (("dot", r'^  "o([0-9a-f]{64})" \[shape=ellipse'), ("mermaid", r"^  o([0-9a-f]{16})\(\[")):
        drawn = bench_command(demo_runs.project, "lineage", "--format", form, "published/example").stdout
        nodes = re.findall(declared, drawn, re.M)
        assert len(nodes) == len(set(nodes)) == len(objects), form
        boxes = re.findall(r'^  "?a([0-9a-f]{16,64})"? ?\[', drawn, re.M)
        assert len(boxes) == len(set(boxes)) == len(actions), form


def test_ls_runs_records_both_demo_runs_with_what_each_executed(demo_runs: DemoRuns) -> None:
    runs = _json(demo_runs, "ls", "runs")["runs"]
    runs = sorted(runs, key=lambda run: run["started"])
    assert [run["executed"] for run in runs] == [demo_runs.first.result["executed_stages"], 0]
    assert all(run["verified"] and run["suite_id"] == "example" for run in runs)


@pytest.mark.parametrize("listing", ["attempts", "bundles"])
def test_ls_lists_what_the_demo_made_and_its_short_digests_resolve(demo_runs: DemoRuns, listing: str) -> None:
    done = bench_command(demo_runs.project, "ls", listing)
    assert done.returncode == 0, done.stderr
    shorts = re.findall(r"^\s+([0-9a-f]{12})\s", done.stdout, re.M)
    assert shorts, done.stdout
    shown = bench_command(demo_runs.project, "--json", "store", "cat", shorts[0])
    assert shown.returncode == 0 and json.loads(shown.stdout)["digest"].split(":")[1].startswith(shorts[0])
    if listing == "attempts":
        assert len(shorts) == len(SYSTEMS) * len(CHALLENGES)  # one line per memory system's pair


def test_load_bundle_gives_a_notebook_the_records_from_the_directory_or_the_store(demo_runs: DemoRuns) -> None:
    from_directory = load_bundle(demo_runs.published)
    from_store = load_bundle("published/example", demo_runs.store)
    assert from_directory.records == from_store.records and len(from_directory.records) == len(SYSTEMS) * len(
        CHALLENGES
    )
    rows = from_directory.rows()
    assert {row["challenge"] for row in rows} == CHALLENGES
    systems = {system.condition for system in from_directory.headline.systems}
    assert systems == {f"{system}:backfilled" for system in SYSTEMS}
