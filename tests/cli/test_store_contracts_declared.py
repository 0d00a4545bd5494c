"""`store fsck` (and `gc`, `--repair`) read references by type in a fresh process, where the command line imports little
(issue 39): they must still know every stored document's contract, or a digest a document keeps as a value (a
preregistration's frozen inputs, a summary's key ids) would be taken for a missing reference."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.analysis.prereg import Preregistration
from bench.store import Store

REPO = Path(__file__).resolve().parents[2]


def _bench(store: Path, *argv: str) -> tuple[int, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--json", "--store", str(store), "store", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, json.loads(done.stdout)


def test_a_document_keeping_digests_as_values_is_clean_to_fsck(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    frozen = (REPO / "manifests" / "example" / "harbor-holds" / "v3.json").read_bytes()
    prereg = Preregistration.model_validate_json(frozen)
    Store(str(store_dir)).put_document(prereg)
    code, report = _bench(store_dir, "fsck")
    assert (code, report["status"], report["missing"]) == (0, "clean", {}), report
