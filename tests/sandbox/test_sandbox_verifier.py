"""The runner-owned verifier: pinned, run fresh and read-only over the final tree, invisible to the arm; calibration."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.cli import main
from bench.errors import ContractError, SandboxError
from bench.run.catalogue import services
from bench.sandbox import Mount, ProcessOutcome, RunRequest, container_spec
from bench.sandbox.backends.docker import DockerBackend
from bench.stages.calibrate import CalibrationVerdict, require_calibrated, run_calibration
from bench.stages.verify import VerifierResult, run_verifier, verify
from bench.store import Store
from bench.suite.challenge import load_challenge
from tests.sandbox.sandbox_helpers import make_tree, write_challenge

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

TOKEN = "zq-7731-runner-owned"
VERIFY = f"# {TOKEN}\ngrep -qx 'hello, world' hello.txt && echo verified\n"
SOLVE = "printf 'hello, world\\n' > hello.txt\n"


@pytest.fixture
def challenge(tmp_path: Path) -> Path:
    return write_challenge(tmp_path / "greeting", VERIFY, oracle=SOLVE, answer_phrases=[TOKEN])


def test_the_verifier_passes_and_fails_on_the_tree_it_is_given(
    store: Store, backend: DockerBackend, tiny_image: str, challenge: Path
) -> None:
    manifest = load_challenge(challenge)
    solved = run_verifier(backend, challenge, manifest, tiny_image, make_tree(store, {"hello.txt": b"hello, world\n"}))
    unsolved = run_verifier(backend, challenge, manifest, tiny_image, make_tree(store, {"hello.txt": b"hello\n"}))
    assert (solved.outcome, solved.exit_code, solved.output) == (ProcessOutcome.SUCCEEDED, 0, "verified\n")
    assert (unsolved.outcome, unsolved.exit_code) == (ProcessOutcome.FAILED, 1)


def test_a_verifier_whose_digest_differs_is_refused(
    store: Store, backend: DockerBackend, tiny_image: str, challenge: Path
) -> None:
    manifest = load_challenge(challenge)
    (challenge / "verify.sh").write_text(VERIFY.replace("&& echo", "|| true; echo"))
    with pytest.raises(ContractError, match="refusing it"):
        run_verifier(backend, challenge, manifest, tiny_image, make_tree(store, {"hello.txt": b"x"}))


def test_the_verifier_is_read_only_timed_and_its_output_bounded(
    store: Store, backend: DockerBackend, tiny_image: str, tmp_path: Path
) -> None:
    script = "touch /mnt/task/x 2>/dev/null && echo writable; yes line | head -c 200000; exit 4\n"
    directory = write_challenge(tmp_path / "noisy", script)
    result = run_verifier(backend, directory, load_challenge(directory), tiny_image, make_tree(store, {"a": b"a"}))
    assert result.outcome is ProcessOutcome.FAILED and result.exit_code == 4
    assert result.output.startswith("line\n") and len(result.output) == 64 * 1024 and result.output_bytes == 200000
    slow = write_challenge(tmp_path / "slow", "sleep 30\n")
    manifest = load_challenge(slow).model_copy(
        update={"verifier": load_challenge(slow).verifier.model_copy(update={"timeout_seconds": 1})}
    )
    late = run_verifier(backend, slow, manifest, tiny_image, make_tree(store, {"a": b"a"}))
    assert late.outcome is ProcessOutcome.TIMED_OUT and late.exit_code is None


def test_an_arm_cannot_read_the_verifier_or_the_manifest(
    store: Store, backend: DockerBackend, tiny_image: str, challenge: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    manifest = load_challenge(challenge)
    # Every regular file outside the kernel's pseudo-filesystems; the token is split so the command line lacks it.
    search = (
        "find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f -print"
        f" | xargs grep -l {TOKEN[:7]}''{TOKEN[7:]}; test -e /mnt/task && echo asset-dir-present; echo searched"
    )
    spec = container_spec(tiny_image, manifest.environment, ("sh", "-c", search))
    result = backend.run(
        RunRequest(spec=spec, workspace=make_tree(store, {"hello.txt": b"hello\n"}), timeout_seconds=60)
    )
    assert result.output == "searched\n"  # no file holds the token and no asset directory exists
    # The same search does find both files when they are mounted, so the check above can fail.
    # Mounted from a neutral host path: this test's own directory names an arm, which every run refuses.
    task = tmp_path_factory.mktemp("task")
    shutil.copytree(challenge, task, dirs_exist_ok=True)
    exposed = spec.model_copy(update={"mounts": (Mount.of(task, "runner:task", "/mnt/task"),)})
    leaked = backend.run(RunRequest(spec=exposed, workspace=None, timeout_seconds=60, read_back=False))
    assert set(leaked.output.split()) == {
        "/mnt/task/verify.sh",
        "/mnt/task/challenge.json",
        "asset-dir-present",
        "searched",
    }


def test_calibration_fails_untouched_and_passes_with_the_oracle(
    store: Store, backend: DockerBackend, tiny_image: str, challenge: Path
) -> None:
    redacted = make_tree(store, {"hello.txt": b"hello\n"})
    report = run_calibration(backend, store, challenge, load_challenge(challenge), tiny_image, redacted).report
    assert report.repeats == 5 and report.untouched.outcomes == (ProcessOutcome.FAILED,) * 5
    assert report.oracle is not None and report.oracle.outcomes == (ProcessOutcome.SUCCEEDED,) * 5
    assert report.verdict is CalibrationVerdict.CALIBRATED and report.undeclared_outputs == ()
    assert report.oracle_audit is not None
    require_calibrated(report)


def test_the_report_holds_decided_facts_and_the_runs_what_they_observed(
    store: Store, backend: DockerBackend, tiny_image: str, challenge: Path
) -> None:
    """Two calibrations of one tree decide one report, byte for byte: what a paired attempt's key digests; their
    runs (each with its own seconds) are documents beside it."""
    redacted = make_tree(store, {"hello.txt": b"hello\n"})
    manifest = load_challenge(challenge)
    first, second = (
        run_calibration(backend, store, challenge, manifest, tiny_image, redacted, repeats=1) for _ in "12"
    )
    assert store.put_document(first.report) == store.put_document(second.report)
    assert "seconds" not in first.report.model_dump_json()
    assert len(first.runs.untouched) == len(first.runs.oracle) == 1
    runs = [store.get_document(run, VerifierResult) for run in (*first.runs.untouched, *second.runs.untouched)]
    assert [run.outcome for run in runs] == [ProcessOutcome.FAILED] * 2 and all(run.seconds > 0 for run in runs)


class _OneRunPerturbed:
    """The real engine, with one run's environment changed (``FLAKE=1``): a verifier that reads anything outside
    the tree (a clock, a race, the host) behaves exactly so, and this makes that one run happen on cue."""

    def __init__(self, backend: DockerBackend, which: int) -> None:
        self.backend, self.which, self.runs = backend, which, 0

    def run(self, request: RunRequest) -> object:
        self.runs += 1
        if self.runs == self.which:
            spec = request.spec.model_copy(update={"env": {**request.spec.env, "FLAKE": "1"}})
            request = request.model_copy(update={"spec": spec})
        return self.backend.run(request)

    def __getattr__(self, name: str) -> object:
        return getattr(self.backend, name)


def test_a_verifier_that_passes_four_of_five_times_on_the_oracle_tree_is_refused_as_flaky(
    store: Store, backend: DockerBackend, tiny_image: str, tmp_path: Path
) -> None:
    flaky = write_challenge(tmp_path / "flaky", 'test -z "$FLAKE" && grep -qx "hello, world" hello.txt\n', oracle=SOLVE)
    # Runs 1-5 verify the untouched tree, run 6 applies the oracle, runs 7-11 verify its tree: 9 is the third.
    perturbed = _OneRunPerturbed(backend, 9)
    redacted = make_tree(store, {"hello.txt": b"hello\n"})
    report = run_calibration(perturbed, store, flaky, load_challenge(flaky), tiny_image, redacted).report  # type: ignore[arg-type]
    assert perturbed.runs == 11
    assert report.oracle is not None
    assert report.oracle.outcomes.count(ProcessOutcome.SUCCEEDED) == 4
    assert report.verdict is CalibrationVerdict.FLAKY
    expected = "on the oracle tree run(s) 1, 2, 4, 5 succeeded; run(s) 3 failed"
    assert expected in report.reason
    with pytest.raises(SandboxError, match=r"refused \(flaky\): the verifier disagrees with itself on the oracle"):
        require_calibrated(report)


def test_an_oracle_that_writes_an_undeclared_lockfile_fails_calibration_naming_it(
    store: Store, backend: DockerBackend, tiny_image: str, tmp_path: Path
) -> None:
    writes_lockfile = SOLVE + "echo '{}' > package-lock.json\nmkdir -p .cache && echo x > .cache/build\n"
    sloppy = write_challenge(tmp_path / "sloppy", VERIFY, oracle=writes_lockfile)
    redacted = make_tree(store, {"hello.txt": b"hello\n"})
    report = run_calibration(backend, store, sloppy, load_challenge(sloppy), tiny_image, redacted, repeats=2).report
    assert report.verdict is CalibrationVerdict.UNDECLARED_OUTPUT
    assert report.undeclared_outputs == (".cache", "package-lock.json") and report.prebuild_undeclared == ()
    assert report.oracle is not None and report.oracle.agreed is ProcessOutcome.SUCCEEDED
    with pytest.raises(
        SandboxError, match=r"the oracle wrote \.cache, package-lock\.json outside allowed_output_paths"
    ):
        require_calibrated(report)


def test_a_prebuild_that_writes_an_undeclared_lockfile_fails_calibration_naming_it(
    store: Store, backend: DockerBackend, tiny_image: str, tmp_path: Path
) -> None:
    environment = {"network_mode": "none", "cpus": 1, "memory_mb": 256, "prebuild_argv": ["touch", "yarn.lock"]}
    locking = write_challenge(tmp_path / "locking", VERIFY, oracle=SOLVE, environment=environment)
    redacted = make_tree(store, {"hello.txt": b"hello\n"})
    report = run_calibration(backend, store, locking, load_challenge(locking), tiny_image, redacted, repeats=1).report
    assert report.verdict is CalibrationVerdict.UNDECLARED_OUTPUT
    assert report.prebuild_undeclared == ("yarn.lock",) and report.prebuild_audit is not None
    with pytest.raises(SandboxError, match=r"the prebuild wrote yarn\.lock outside allowed_output_paths"):
        require_calibrated(report)


def test_a_challenge_whose_verifier_passes_untouched_is_refused(
    store: Store, backend: DockerBackend, tiny_image: str, tmp_path: Path
) -> None:
    lax = write_challenge(tmp_path / "lax", "test -f hello.txt\n", oracle=SOLVE)
    report = run_calibration(
        backend, store, lax, load_challenge(lax), tiny_image, make_tree(store, {"hello.txt": b"hi"})
    ).report
    assert report.verdict is CalibrationVerdict.PASSES_UNTOUCHED and report.oracle is None
    with pytest.raises(SandboxError, match="passes on the untouched start tree"):
        require_calibrated(report)


def test_calibrate_cli(tiny_image: str, challenge: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello\n")
    argv = [
        "--store",
        str(tmp_path / "store"),
        "--json",
        "calibrate",
        str(challenge),
        "--workspace",
        str(workspace),
        "--image",
        tiny_image,
    ]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "calibrated"
    (workspace / "hello.txt").write_text("hello, world\n")
    assert main(argv) == 1
    assert "passes on the untouched start tree" in capsys.readouterr().err


def test_the_verify_stage_records_once_and_refuses_a_moved_pin(store: Store, tiny_image: str, challenge: Path) -> None:
    final = make_tree(store, {"hello.txt": b"hello, world\n"})
    pinned = load_challenge(challenge).verifier.asset.sha256
    params = {"challenge_dir": str(challenge), "verifier_sha256": pinned, "image_id": tiny_image}
    first = execute(StageContext(store, services()), verify, {"final": final}, params)
    again = execute(StageContext(store, services()), verify, {"final": final}, params)
    assert first.executed and not again.executed
    assert store.get_document(first.outputs["verifier"], VerifierResult).outcome is ProcessOutcome.SUCCEEDED
    with pytest.raises(ContractError, match="re-plan"):
        execute(StageContext(store, services()), verify, {"final": final}, params | {"verifier_sha256": "0" * 64})
