"""A provisioner's code as the keys cover it: its executable, its `-m` module's source, its declared files; what
changed, named; the suite's own part pinned; and what a restore mounts named by digest, a pass-through of suite
files refused unless declared and read-only. Real files, a real store directory."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.agent.mounted import record_mounts, require_declared
from bench.cli import main
from bench.contracts import Sha256
from bench.errors import ContractError
from bench.provision.code import code_change, code_pin, provisioner_code, require_code_pin
from bench.provision.messages import RestoreLocations, RestoreResponse
from bench.sandbox.spec import MemoryAttachment, Mount
from bench.store import Store, tree_from_directory
from bench.suite.memory_system import MemorySystem

PROVISION = "#!/usr/bin/env python3\nimport sys\nsys.path.insert(0, 'lib')\n"


def _system(**fields: object) -> MemorySystem:
    declared = {
        "name": "notes",
        "version": "1",
        "provisioner": ["systems/notes/provision"],
        "attachment": {"mounts": [{"location": "notes", "target": "/home/dev/NOTES.md"}]},
        **fields,
    }
    return MemorySystem.model_validate_json(json.dumps(declared))


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    system = root / "systems" / "notes"
    (system / "lib" / "__pycache__").mkdir(parents=True)
    (system / "provision").write_text(PROVISION)
    (system / "provision").chmod(0o755)
    (system / "lib" / "helper.py").write_text("ANSWER = 1\n")
    (system / "hook.py").write_text("print('recall')\n")
    return root


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store")


def test_the_code_names_the_executable_and_every_declared_file_but_bytecode(suite: Path, store: Store) -> None:
    system = _system(code=["systems/notes/lib", "systems/notes/hook.py"])
    (suite / "systems" / "notes" / "lib" / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"\x00derived")
    code = provisioner_code(store, system, suite)
    assert code.program == "systems/notes/provision" and code.executable == Sha256.of(PROVISION.encode())
    assert sorted(code.files) == ["systems/notes/hook.py", "systems/notes/lib/helper.py"] and code.modules == {}
    (suite / "systems" / "notes" / "lib" / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"\x00rewritten")
    assert provisioner_code(store, system, suite) == code, "bytecode the interpreter rewrites changes nothing"


def test_an_edited_file_changes_the_code_and_says_which(suite: Path, store: Store) -> None:
    system = _system(code=["systems/notes/lib"])
    before = provisioner_code(store, system, suite)
    (suite / "systems" / "notes" / "lib" / "helper.py").write_text("ANSWER = 2\n")
    after = provisioner_code(store, system, suite)
    assert store.put_document(before) != store.put_document(after)
    assert code_change(before, after) == "provisioner notes: code changed (file systems/notes/lib/helper.py)"
    (suite / "systems" / "notes" / "provision").write_text(PROVISION + "# edited\n")
    again = provisioner_code(store, system, suite)
    assert code_change(after, again) == "provisioner notes: code changed (executable)"


def test_an_interpreted_module_is_keyed_by_its_source_and_the_interpreter(suite: Path, store: Store) -> None:
    system = _system(provisioner=["python3", "-m", "bench.memory"])
    code = provisioner_code(store, system, suite)
    assert {"bench.memory", "bench.memory.recall", "bench.memory.provisioner"} <= code.modules.keys()
    recall = Path(sys.modules["bench"].__file__ or "").parent / "memory" / "recall.py"
    assert store.get_bytes(code.modules["bench.memory.recall"]) == recall.read_bytes(), "the mounted hook's source"
    assert code.executable == Sha256.of((Path(sys.executable).parent / "python3").resolve().read_bytes())
    assert code_pin(system, suite) is None, "nothing of it is the suite's: no pin, every key"


def test_declared_code_must_lie_in_the_suite(suite: Path, store: Store, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.py").write_text("x = 1\n")
    (suite / "systems" / "escape.py").symlink_to(tmp_path / "elsewhere.py")
    with pytest.raises(ValidationError, match="portable relative"):
        _system(code=["../elsewhere.py"])
    for path, named in (("systems/escape.py", "outside the suite directory"), ("systems/gone.py", "missing")):
        with pytest.raises(ContractError, match=named):
            provisioner_code(store, _system(code=[path]), suite)


def test_the_pin_covers_the_suites_own_code_and_a_stale_one_is_refused(suite: Path) -> None:
    system = _system(code=["systems/notes/lib"])
    pinned = system.model_copy(update={"code_sha256": code_pin(system, suite)})
    require_code_pin(pinned, suite, "suites/mine")
    (suite / "systems" / "notes" / "lib" / "helper.py").write_text("ANSWER = 3\n")
    assert code_pin(system, suite) != pinned.code_sha256
    with pytest.raises(ContractError, match=r"'notes': its code is pinned at .* but the files now hash") as stale:
        require_code_pin(pinned, suite, "suites/mine")
    assert stale.value.hint is not None and "stele-bench pin suites/mine" in stale.value.hint


def test_the_preregistered_name_of_a_declaration_ignores_its_pin(suite: Path) -> None:
    system = _system()
    assert system.model_copy(update={"code_sha256": "0" * 64}).digest == system.digest
    assert _system(code=["systems/notes/lib"]).digest != system.digest, "declared code paths are the declaration's"


def test_mounts_are_named_by_digest(store: Store, tmp_path: Path) -> None:
    state = tmp_path / "home" / "project"
    state.mkdir(parents=True)
    (state / "NOTES.md").write_text("remember\n")
    attachment = MemoryAttachment(
        mounts=(
            Mount.of(state / "NOTES.md", "restore:notes/notes", "/home/dev/NOTES.md"),
            Mount.of(state, "restore:notes/state", "/opt/s"),
        )
    )
    recorded = record_mounts(store, attachment)
    assert [mount.digest for mount in recorded.mounts] == [
        store.put_bytes(b"remember\n"),
        tree_from_directory(store, state),
    ]


def _restored_at(path: Path) -> RestoreResponse:
    locations = RestoreLocations(paths={"notes": str(path)})
    return RestoreResponse(project="p1", queue_before_count=0, restore_seconds=0.1, locations=locations)


def test_a_restore_location_passing_suite_files_through_must_be_declared_and_read_only(suite: Path) -> None:
    hook = suite / "systems" / "notes" / "hook.py"
    mount = {"location": "notes", "target": "/opt/hook.py"}
    with pytest.raises(ContractError, match="not declared as its code"):
        require_declared(_system(attachment={"mounts": [mount]}), _restored_at(hook), suite)
    code = ["systems/notes/hook.py"]
    require_declared(_system(code=code, attachment={"mounts": [mount]}), _restored_at(hook), suite)
    writable = _system(code=code, attachment={"mounts": [{**mount, "writable": True}]})
    with pytest.raises(ContractError, match="writable, so the agent could write through into the suite"):
        require_declared(writable, _restored_at(hook), suite)
    outside = suite.parent / "elsewhere.md"
    outside.write_text("notes\n")
    require_declared(_system(attachment={"mounts": [mount]}), _restored_at(outside), suite)  # the provisioner's own


def test_pin_check_notices_an_edited_provisioner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "challenges" / "example"
    suite = tmp_path / "example"
    shutil.copytree(example, suite)
    assert main(["--json", "pin", str(suite), "--check"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    provision = suite / "systems" / "static-notes" / "provision"
    provision.write_text(provision.read_text() + "# edited\n")
    assert main(["--json", "pin", str(suite), "--check"]) == 1
    (stale,) = json.loads(capsys.readouterr().out)["changed"]
    assert stale.startswith(f"{suite / 'suite.json'} memory_systems.3.code_sha256: ")
