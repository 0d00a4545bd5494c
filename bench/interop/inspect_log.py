"""A published bundle as an Inspect AI evaluation log, so `inspect view` can show every arm.

Each graded arm of each recorded attempt is one sample: ``<challenge>-<attempt>-<condition>``, epoch the attempt,
its transcript as chat messages (the prompt and the memory's injected context as user messages tagged with their
channel in ``metadata``, the agent's text and tool calls, tool results), and three scores: ``verifier`` (C or I:
the outcome the analysis counts), ``delivered`` and ``used`` (1 or 0, the other two layers). The sample's metadata
carries the condition, the admission and the digests to trace it back with `stele-bench lineage`.

The file is Inspect's JSON log format (version 2), written with the standard library: stele-bench does not need
Inspect installed to export, and the test reads the file back with ``inspect_ai.log.read_eval_log``.

Everything comes from the bundle alone, no store: grades are found by their kind among its files, each tied to its
attempt through the bundle's own lineage (the ``paired-attempt`` action whose pair records name its arm record), so
the export follows no path convention of a plan. The task is the suite (the ``report`` action's parameter), the
log's date the run's (its earliest action), and the file is named as Inspect names its own logs
(``<ISO timestamp>_<task>_<id>.json``): `inspect view` lists only ``.json`` logs named that way.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..agent.arm_record import PairRecord
from ..contracts import Digest, PortablePath
from ..contracts.checked_files import write_checked
from ..contracts.strict_json import parse_json_object
from ..errors import ContractError
from ..grading import StepSource, Transcript
from ..publish.bundle_layout import parse_document
from ..publish.manifest import LINEAGE_PATH
from ..publish.provenance import read_lineage
from ..results import BundleResults, results_of
from ..stages.grade import ArmGrade, arm_result
from ..store import Store
from ..store.actions import ActionKey, ActionResult
from ..suite.memory_system import CONTROL

__all__ = ["inspect_log", "log_name", "write_inspect_log"]

_FORMAT_VERSION = 2


def _grades(files: Mapping[PortablePath, bytes]) -> dict[PortablePath, ArmGrade]:
    found = {}
    for path, data in files.items():
        # The byte test skips most files unparsed; the parse decides.
        if b'"arm-grade"' in data and parse_json_object(data, path).get("kind") == "arm-grade":
            found[path] = parse_document(path, data, ArmGrade)
    return found


@dataclass(frozen=True)
class _Run:
    """The bundle's files as a store, with what its lineage says: each arm's pair, the suite and when it ran."""

    store: Store
    pairs: dict[Digest, PairRecord]  # arm record -> a pair it belongs to (the control: its attempt's first system's)
    suite: str
    started: float  # the earliest action's start (seconds since the epoch)

    @classmethod
    def of(cls, files: Mapping[PortablePath, bytes]) -> _Run:
        store = Store.in_memory()
        with store.batch():
            for path, data in files.items():
                store.put_bytes(data, document=path.endswith(".json"))
        pairs: dict[Digest, PairRecord] = {}
        suites, starts = set(), []
        for action in read_lineage(files).actions:
            for digest in (action.key, action.result):
                if not store.has(digest):
                    raise ContractError(f"{LINEAGE_PATH} names {digest}, which is not in the bundle", path=LINEAGE_PATH)
            spec, outcome = store.get_document(action.key, ActionKey), store.get_document(action.result, ActionResult)
            starts.append(outcome.started)
            if action.stage == "report":
                suites.add(str(spec.params.get("suite", "")))
            for name in sorted(outcome.outputs) if action.stage == "paired-attempt" else ():
                if name.startswith("pairs/"):
                    pair = store.get_document(outcome.outputs[name], PairRecord)
                    for arm in pair.arms:
                        pairs.setdefault(arm, pair)
        if len(suites) != 1 or not next(iter(suites)):
            raise ContractError(
                f"{LINEAGE_PATH} must list one report action naming its suite (found {sorted(suites)})",
                path=LINEAGE_PATH,
            )
        return cls(store=store, pairs=pairs, suite=suites.pop(), started=min(starts))

    def pair_of(self, arm: Digest) -> PairRecord:
        if arm not in self.pairs:
            raise ContractError(f"arm record {arm} was produced by no paired attempt the bundle's lineage lists")
        return self.pairs[arm]


def _messages(transcript: Transcript) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for step in transcript.steps:
        meta = {"step": step.index, "origin": step.origin}
        if step.source is StepSource.AGENT:
            message: dict[str, Any] = {"role": "assistant", "content": step.text, "metadata": meta}
            if step.tool_calls:
                message["tool_calls"] = [
                    {"id": call.id, "function": call.name, "arguments": call.input, "type": "function"}
                    for call in step.tool_calls
                ]
                names.update((call.id, call.name) for call in step.tool_calls)
            messages.append(message)
        elif step.source is StepSource.TOOL:
            for result in step.tool_results:
                tool: dict[str, Any] = {"role": "tool", "content": result.text, "tool_call_id": result.tool_use_id}
                tool["function"] = names.get(result.tool_use_id)
                if result.is_error:
                    tool["error"] = {"type": "unknown", "message": result.text[:2000]}
                messages.append({**tool, "metadata": meta})
        else:
            role = "system" if step.source is StepSource.SYSTEM else "user"
            if step.channel is not None:
                meta["channel"] = step.channel.value
            messages.append({"role": role, "content": step.text, "metadata": {**meta, "source": step.source.value}})
    return messages


def _sample(run: _Run, grade: ArmGrade, bundle: BundleResults) -> dict[str, Any]:
    store = run.store
    pair = run.pair_of(grade.arm)
    transcript = store.get_document(grade.transcript, Transcript)
    result = arm_result(store, grade)
    condition = grade.condition
    records = [
        digest
        for digest, record in bundle.records.items()
        if (record.key.challenge, record.attempt) == (pair.challenge_id, pair.attempt)
        and (condition == CONTROL or record.key.treatment_condition.split(":", 1)[0] == condition)
    ]
    decisions = [bundle.admissions[digest] for digest in records if digest in bundle.admissions]
    messages = _messages(transcript)
    prompt = next((m["content"] for m in messages if m["metadata"].get("source") == StepSource.USER.value), "")
    answer = next((m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]), "")
    return {
        "id": f"{pair.challenge_id}-{pair.attempt}-{condition}",
        "epoch": pair.attempt,
        "input": prompt,
        "target": "",
        "messages": messages,
        "output": {"model": pair.model, "choices": [], "completion": answer},
        "scores": {
            "verifier": {"value": "C" if result.outcome.value == "pass" else "I", "answer": result.outcome.value},
            "delivered": {"value": int(result.delivered), "explanation": ", ".join(result.delivered_via) or None},
            "used": {"value": int(result.used)},
        },
        "metadata": {
            "challenge": pair.challenge_id,
            "attempt": pair.attempt,
            "condition": condition,
            "tokens": result.tokens,
            "wall_seconds": result.wall_seconds,
            "admitted": any(decision.decision.value == "admitted" for decision in decisions),
            "admission_reasons": sorted({decision.reason.value for decision in decisions}),
            "records": [str(digest) for digest in records],
            "arm_record": str(grade.arm),
            "transcript": str(grade.transcript),
        },
        "store": {},
        "events": [],
        "model_usage": {},
        "attachments": {},
    }


def _accuracy(samples: list[dict[str, Any]], scorer: str) -> dict[str, Any]:
    values = [1.0 if s["scores"][scorer]["value"] in ("C", 1) else 0.0 for s in samples]
    mean = sum(values) / len(values) if values else 0.0
    return {
        "name": scorer,
        "scorer": scorer,
        "params": {},
        "metrics": {"accuracy": {"name": "accuracy", "value": mean, "params": {}}},
    }


def _created(run: _Run) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(run.started))


def inspect_log(files: Mapping[PortablePath, bytes]) -> dict[str, Any]:
    """The log of the bundle whose files are ``files``: the task is its suite, every arm a sample."""
    run = _Run.of(files)
    task = run.suite
    bundle = results_of(files, task)
    grades = _grades(files)
    if not grades:
        raise ContractError(f"the bundle of {task} holds no arm grades: there is no arm to export", path=task)
    samples = sorted((_sample(run, g, bundle) for g in grades.values()), key=lambda s: s["id"])
    models = {record.key.model for record in bundle.records.values()} or {"unknown"}
    identity = Digest.of(b"".join(sorted(grade.arm.encode() for grade in grades.values()))).hex[:22]
    created = _created(run)
    return {
        "version": _FORMAT_VERSION,
        "status": "success",
        "eval": {
            "eval_id": identity,
            "run_id": identity,
            "created": created,
            "task": task,
            "task_id": identity,
            "task_version": 0,
            "dataset": {"name": task, "samples": len(samples), "sample_ids": [s["id"] for s in samples]},
            "model": "/".join(sorted(models)),
            "config": {},
            "packages": {"stele-bench": __version__},
            "metadata": {"records": len(bundle.records)},
        },
        "plan": {"name": "paired", "steps": [], "config": {}},
        "results": {
            "total_samples": len(samples),
            "completed_samples": len(samples),
            "scores": [_accuracy(samples, scorer) for scorer in ("verifier", "delivered", "used")],
        },
        "stats": {"started_at": created, "completed_at": created, "model_usage": {}},
        "samples": samples,
    }


def log_name(log: Mapping[str, Any]) -> str:
    """The file name Inspect gives its own logs, ``<ISO timestamp>_<task>_<id>.json``, which `inspect view` lists
    (a ``.json`` log named otherwise is not listed); ``_`` separates the parts, so none may hold one."""
    stamp = log["eval"]["created"].replace(":", "-")
    return f"{stamp}_{log['eval']['task'].replace('_', '-')}_{log['eval']['task_id']}.json"


def write_inspect_log(files: Mapping[PortablePath, bytes], log_dir: Path) -> tuple[Path, int]:
    """Write the bundle's log into ``log_dir`` under :func:`log_name`; returns its path and its sample count."""
    log = inspect_log(files)
    target = log_dir / log_name(log)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(log, indent=1, ensure_ascii=False) + "\n"
    # A lone surrogate (a bundle directory's name that is not UTF-8) written as its JSON escape, not as raw bytes.
    write_checked(target, text.encode("utf-8", "backslashreplace"), "the log file")
    return target, len(log["samples"])
