"""A suite outside this repository, whose memory system lives outside it too, through the real doit pipeline.

The test writes a suite into a temporary directory: the example project and fixture, one challenge, and a memory
system of its own: a stdlib provisioner script that restores the evidence into one notes file, and a
UserPromptSubmit hook (declared in the suite, run by the real CLI in the container) that hands the notes to the
model. The suite runs in forward mode against a provider on a loopback socket (the Messages API) with the money
fence reading a quota API on another; the key is exported for the run and planted nowhere else, and then searched
for in every stored object and every published file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.cli.publish_cmd import verify_bundle
from bench.gateway import Policy
from bench.gateway.dialects.anthropic import AnthropicMessages
from bench.publish.verification import Trust
from bench.run.prereg_freeze import freeze
from bench.sandbox.layout import WORKSPACE
from bench.store import Store, export_tree
from bench.suite.suite import open_suite, render_policy
from tests.fence.fence_provider_double import Account, serve
from tests.gateway.loopback import AnthropicDouble, Reply, serve_double

MESSAGES = AnthropicMessages()
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "challenges" / "example"
CHALLENGE = "harbor-holds"
KEY = "sk-ant-api03-planted-outside-suite-key-fedcba9876543210"
ENV = {"TEST_PROVIDER_URL": "", "TEST_PROVIDER_KEY": KEY, "TEST_QUOTA_URL": ""}
PROVISIONER = '''#!/usr/bin/env python3
"""A memory system that is one notes file: every evidence document, concatenated; probes read it back."""
import hashlib, json, re, secrets, shutil, sys, tempfile
from pathlib import Path

home = Path(tempfile.gettempdir()) / "notes-home"
verb, request = sys.argv[1], json.loads(sys.stdin.read())


def answer(probe, documents):
    if probe["kind"] == "semantic":
        return {"name": probe["name"], "kind": "semantic", "status": "unsupported", "reason": "no vectors"}
    if probe["kind"] == "graph":  # documents anchored on the file, then the documents they name as related
        anchored = [p for p, t in documents.items() if re.search(r"^Anchors:.*" + re.escape(probe["query"]), t, re.M)]
        related = [r for p in anchored for line in re.findall(r"^Related: (.*)$", documents[p], re.M)
                   for r in line.split(", ")]
        hits = list(dict.fromkeys(anchored + [r for r in related if r in documents]))
    else:
        terms = set(re.findall(r"[a-z0-9]+", probe["query"].lower()))
        scored = sorted((-len(terms & set(re.findall(r"[a-z0-9]+", t.lower()))), p) for p, t in documents.items())
        hits = [p for score, p in scored if score][: probe.get("top_k", 5)]
    return {"name": probe["name"], "kind": probe["kind"], "status": "answered", "hits": hits}


if verb == "restore":
    project = "n" + secrets.token_hex(8)
    (home / project).mkdir(parents=True)
    evidence = Path(request["artifacts"]["evidence_corpus"]["path"])
    documents = {p.relative_to(evidence).as_posix(): p.read_text() for p in sorted(evidence.rglob("*.md"))}
    (home / project / "notes.txt").write_text("\\n\\n".join(documents.values()))
    (home / project / "restore.json").write_text(json.dumps({"documents": documents, "probes": request["probes"]}))
    paths = {"notes": str(home / project / "notes.txt")}
    print(json.dumps({"project": project, "queue_before_count": 0, "restore_seconds": 0.0,
                      "locations": {"version": 1, "paths": paths}}))
elif verb == "snapshot":
    notes, facts = home / request["project"] / "notes.txt", home / request["project"] / "restore.json"
    text = notes.read_text() if notes.is_file() else ""
    restored = json.loads(facts.read_text()) if facts.is_file() else {"documents": {}, "probes": []}
    present = {path: body for path, body in restored["documents"].items() if body in text}
    print(json.dumps({"state": {"present": bool(text), "items": len(present),
                                "fingerprint": hashlib.sha256(text.encode()).hexdigest()},
                      "probes": [answer(probe, present) for probe in restored["probes"]],
                      "queue_after_count": 0, "snapshot_seconds": 0.0}))
else:
    shutil.rmtree(home / request["project"], ignore_errors=True)
    print(json.dumps({"ok": True}))
'''
HOOK = (
    "python3 -c \"import json; print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit', "
    "'additionalContext': open('/opt/notes.txt').read()}}))\""
)


def write_suite(base: Path) -> Path:
    suite = base / "outside"
    (suite / "memory").mkdir(parents=True)
    shutil.copy(EXAMPLE / "project.bundle", suite / "project.bundle")
    shutil.copytree(EXAMPLE / "fixture", suite / "fixture")
    shutil.copytree(EXAMPLE / CHALLENGE, suite / CHALLENGE)
    provisioner = suite / "memory" / "provision"
    provisioner.write_text(PROVISIONER)
    provisioner.chmod(0o755)
    example = json.loads((EXAMPLE / "suite.json").read_text())
    manifest = {
        **{key: example[key] for key in ("kind", "schema_version", "project", "fixture", "model")},
        "suite_id": "outside",
        "challenges": [entry for entry in example["challenges"] if entry["directory"] == CHALLENGE],
        "memory_systems": [
            {
                "name": "notes",
                "version": "0.1",
                "provisioner": ["memory/provision"],
                "attachment": {
                    "settings": {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": HOOK}]}]}},
                    "mounts": [{"location": "notes", "target": "/opt/notes.txt"}],
                },
            }
        ],
        "attempts": 1,
        "gateway_mode": "forward",
        "forward": {
            "upstream_env": "TEST_PROVIDER_URL",
            "key_env": "TEST_PROVIDER_KEY",
            "prices": {example["model"]: {"input": "3", "output": "15", "cache_write": "3.75", "cache_read": "0.3"}},
            "arm_cap_usd": "1.50",
            "pair_cap_usd": "3",
            "fence": {
                "quota_url_env": "TEST_QUOTA_URL",
                "key_sha256": hashlib.sha256(KEY.encode()).hexdigest(),
                "production_reserve_usd": "10",
            },
        },
    }
    (suite / "suite.json").write_text(json.dumps(manifest, indent=2))
    return suite


@pytest.fixture(scope="module")
def provider() -> Iterator[dict[str, str]]:
    """The provider's Messages API (its model answers as the challenge's policy does) and its quota API, whose
    balance drains by what the provider bills."""
    policy = Policy.model_validate_json(render_policy((EXAMPLE / CHALLENGE / "policy.json").read_bytes(), WORKSPACE))
    account = Account(key=KEY)
    double = AnthropicDouble(
        keys=frozenset({KEY}),
        model=lambda body: Reply(tuple(MESSAGES.answer(policy, body)[1]["content"])),
        on_bill=lambda cost: account.spend(str(cost)),
    )
    with serve_double(double) as upstream, serve(account) as quota:
        yield {**ENV, "TEST_PROVIDER_URL": upstream, "TEST_QUOTA_URL": quota}


@pytest.fixture(scope="module")
def ran(
    tmp_path_factory: pytest.TempPathFactory, provider: dict[str, str]
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    base = tmp_path_factory.mktemp("elsewhere")
    suite = write_suite(base)
    freeze(open_suite(suite), base / "manifests" / "outside")
    (base / "plan.json").write_text(json.dumps({"builder": "suite", "args": {"suite": "outside"}}))
    command = [sys.executable, "-m", "doit", "-f", str(REPO / "dodo.py"), "-d", str(base), "plan=plan.json"]
    env = {
        **os.environ,
        **provider,
        "STELE_BENCH_DOIT_DB": str(base / "doit.sqlite"),
        "STELE_BENCH_STORE": str(base / "store"),
    }
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    return base, done


def test_the_outside_suite_runs_end_to_end_and_its_publication_verifies(
    ran: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    base, done = ran
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    store = Store(base / "store")
    published = store.get_ref("published/outside")
    assert published is not None
    export_tree(store, published, base / "published")
    assert verify_bundle(base / "published" / "MANIFEST.json", Trust(unsigned=True)).differences == []
    summary = json.loads((base / "published" / "receipts" / "statistics-summary.json").read_text())
    (cell,) = summary["cells"]
    assert cell["key"]["gateway_mode"] == "forward" and cell["key"]["policy"] is None
    assert cell["build"]["label"] == "notes@0.1" and cell["key"]["treatment_condition"] == "notes:backfilled"
    assert cell["treatment"]["delivered_via"] == {"prompt-time-retrieval": 1} and cell["treatment"]["passes"] == 1
    assert cell["control"]["passes"] == 0
    report = (base / "published" / "report" / "index.html").read_text()
    assert "deterministic stand-in" not in report and "forward mode" in report


def test_the_key_is_in_no_stored_object_and_no_published_file(
    ran: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    base, done = ran
    assert done.returncode == 0, done.stderr[-2000:]
    planted = KEY.encode()
    store = Store(base / "store")
    assert not [digest for digest in store.digests() if planted in store.get_bytes(digest)]
    files = [path for path in (base / "published").rglob("*") if path.is_file()]
    assert files and not [path for path in files if planted in path.read_bytes()]
