"""The facts of a published bundle that a run must reproduce wherever it ran: grades, paired records, admissions,
statistics, the lineage's actions (their keys, unmasked: by provenance where an observed output enters, see
tests/action_keys.py; and their results), the provenance's predicate and the report's attempt pages, with observed
facts aside (wall times, session ids, the host an action ran on, and the digests of what embeds them)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from action_keys import Action, keys_by_provenance

__all__ = ["bundle_facts"]

DIGEST = re.compile(r"^(blake3:[0-9a-f]{64}:\d+|[0-9a-f]{64})$")  # ours, and a provenance subject's SHA-256
NAMED_BY_DIGEST = re.compile(r"^([a-z]+/)[0-9a-f]{64}(\.json)?$")  # records/<hex>.json: a record's name is its digest
# Observed, not decided: how long things took, the agent's session id, and an arm's tokens: in policy mode the
# gateway's stand-in count is the size of each request, and requests carry tool output with its own timings (a
# test run's "in 0.05s"), so two runs of one arm differ by a token now and then (seen: 67802 against 67803).
# Where in its transcript an arm first met a memory phrase is observed too: the CLI interleaves entries of its own
# (seen: two runs of one arm put the same delivery at step 14 and at step 15); that it was delivered, through which
# channel and which phrases, is decided and compared. So is the message of the gateway's conversation that first
# carried it, and when each step ran by the runner's clock.
OBSERVED = {
    *("wall_seconds", "seconds", "session_id", "restore_seconds", "snapshot_seconds", "tokens"),
    *("first_step", "delivered_at", "first_message", "used_at", "started_at", "ended_at"),
    "tokens_per_pass",  # a pass's cost is tokens over passes: observed as the tokens are
}
# An action result's times and the machine it ran on are observed (a cluster's differ by node); what it output is
# decided, by digest (masked, as everywhere: an attempt's outputs embed its times).
OBSERVED_IN_RESULTS = {"started", "ended", "duration_seconds", "host"}


def _decided(value: Any) -> Any:
    """``value`` with observed fields dropped and digests masked (a transcript's digest embeds its times)."""
    if isinstance(value, dict):
        return {key: _decided(item) for key, item in value.items() if key not in OBSERVED}
    if isinstance(value, list):
        return [_decided(item) for item in value]
    if isinstance(value, str) and DIGEST.match(value):
        return "<digest>"
    if isinstance(value, str) and NAMED_BY_DIGEST.match(value):
        return NAMED_BY_DIGEST.sub(r"\1<digest>\2", value)
    return value


def bundle_facts(published: Path) -> dict[str, Any]:
    """Grades by receipt path; records and admissions by attempt and comparability key; the statistics summary."""
    facts: dict[str, Any] = {}
    for grade in sorted((published / "receipts").glob("*/*/*-grade.json")):
        facts[str(grade.relative_to(published))] = _decided(json.loads(grade.read_text()))
    records: dict[str, str] = {}
    for path in sorted((published / "records").glob("*.json")):
        record = json.loads(path.read_text())
        label = f"attempt {record['attempt']} of {json.dumps(_decided(record['key']), sort_keys=True)}"
        records[path.stem] = label
        facts[f"record {label}"] = _decided(record)
    for path in sorted((published / "admissions").glob("*.json")):
        admission = json.loads(path.read_text())
        facts[f"admission {records[path.stem]}"] = _decided(admission)
    facts["statistics"] = _decided(json.loads((published / "receipts" / "statistics-summary.json").read_text()))
    facts.update(_lineage_facts(published))
    provenance = json.loads((published / "provenance.intoto.json").read_text())
    facts["provenance predicate"] = _decided(provenance["predicate"])
    facts["attempt pages"] = sorted(path.name for path in (published / "report" / "attempts").glob("*.html"))
    return facts


def _object(published: Path, digest: str) -> Any:
    return json.loads((published / "objects" / f"{digest.split(':')[1]}.json").read_text())


def _lineage_facts(published: Path) -> dict[str, Any]:
    """Each published action's key, by provenance and otherwise as recorded, and its result (without its observed
    fields, its outputs masked: an observed stage's embed its times), sorted within its stage: the lineage's order
    follows digests, which embed times."""
    lineage = json.loads((published / "receipts" / "lineage.json").read_text())["actions"]
    actions: list[Action] = [
        (action["key"], _object(published, action["key"]), _object(published, action["result"])) for action in lineage
    ]
    facts: dict[str, Any] = {f"lineage {stage} keys": keys for stage, keys in keys_by_provenance(actions).items()}
    for _, key, result in actions:
        decided = _decided({k: v for k, v in result.items() if k not in OBSERVED_IN_RESULTS | {"key"}})
        facts.setdefault(f"lineage {key['stage']} results", []).append(json.dumps(decided, sort_keys=True))
    return {name: sorted(values) for name, values in sorted(facts.items())}
