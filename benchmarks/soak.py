"""Kill recovery, soaked: N demo runs in one project, each killed at a random moment with a random stop signal, then
one clean run that must finish and verify with nothing left over (issue 36, build item 6). Not a timed test: it
prints what each kill came to and a verdict, and exits 1 on any finding.

Each killed run is ``stele-bench demo --attempts A``, A rising by one every fourth run (1 to 5, the most the
example's preregistration allows), so every run has attempts still to do when it is killed after a random delay
with SIGTERM, SIGHUP or SIGKILL to the command, SIGINT or SIGKILL to its whole process group (Ctrl-C, or a terminal
that vanished). After each: the exit code (128 + the signal, or killed), a traceback on stderr, more
than one line of refusal, how long its processes took to be gone (the pipeline, in a session of its own, cleans up
after its command, even one killed outright), and what it left on the engine (only a group killed outright may leave
anything: the next run sweeps it).

Then the clean run, and the findings: it did not verify; a paired attempt whose result was recorded twice (a
finished pair paid twice); a container, network, process or lease of the project left; `store fsck` not clean.
Usage: python3 benchmarks/soak.py [--runs 20] [--seed S] [--project DIR] [--longest SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.store import Store
from bench.store.actions import ActionKey, recorded_from

REPO = Path(__file__).resolve().parent.parent
MOST_ATTEMPTS = 5  # the example's preregistration
KILLS = (
    (signal.SIGTERM, False),
    (signal.SIGHUP, False),
    (signal.SIGKILL, False),
    (signal.SIGINT, True),
    (signal.SIGKILL, True),
)


@dataclass(frozen=True)
class Kill:
    number: int
    signum: signal.Signals
    group: bool
    delay: float
    attempts: int
    code: int | None
    gone_seconds: float
    traceback: bool
    refusal_lines: int
    left: int
    tail: str  # the end of its stderr, shown with a finding

    def findings(self) -> list[str]:
        found = []
        expected = -signal.SIGKILL if self.signum is signal.SIGKILL else 128 + self.signum
        if self.code not in (expected, 0):  # 0: the run finished before the kill
            found.append(f"exit {self.code}, not {expected}")
        if self.traceback:
            found.append("a traceback on stderr")
        if self.code not in (0, -signal.SIGKILL) and self.refusal_lines != 1:
            found.append(f"{self.refusal_lines} refusal lines")
        if self.left and not (self.signum is signal.SIGKILL and self.group):
            found.append(f"{self.left} containers or networks left")
        return found


def _environment(leases: Path) -> dict[str, str]:
    named = ("STELE_BENCH_STORE", "STELE_BENCH_PROJECT", "STELE_BENCH_DOIT_DB")
    return {**{k: v for k, v in os.environ.items() if k not in named}, "SANDBOX_LEASE_DIR": str(leases)}


def _on_engine(leases: Path) -> set[str]:
    """The containers and networks on the engine whose lease lies in ``leases``: the soak's runs'."""
    found = set()
    for kind in (["ps", "-a"], ["network", "ls"]):
        listed = subprocess.run(
            ["docker", *kind, "--filter", "label=sandbox.lease", "--format", '{{.ID}} {{.Label "sandbox.lease"}}'],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        found |= {line.split()[0] for line in listed.splitlines() if str(leases) in line}
    return found


def _processes_of(project: Path) -> list[str]:
    """Processes whose command line names the project (the command, its pipeline, anything they started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if str(project) in argv:
                found.append(f"{entry.name}: {argv[:160]}")
    return found


def _wait_gone(group: int, project: Path, limit: float) -> None:
    """The command's group gone, and every process of the run: its pipeline runs in a session of its own."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            if not _processes_of(project):
                return
        time.sleep(0.1)


def _killed_run(number: int, project: Path, leases: Path, rng: random.Random, longest: float) -> Kill:
    """One run; what it left is what is on the engine after it and was not before (it sweeps the dead first)."""
    before = _on_engine(leases)
    signum, group = rng.choice(KILLS)
    delay, attempts = rng.uniform(1.0, longest), min(MOST_ATTEMPTS, 1 + (number - 1) // 4)
    command = [sys.executable, "-m", "bench", "--project", str(project), "demo", "--attempts", str(attempts)]
    with (
        tempfile.TemporaryFile() as err,
        subprocess.Popen(
            command,
            cwd=REPO,
            env=_environment(leases),
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        ) as process,
    ):
        try:
            code: int | None = process.wait(timeout=delay)
            gone = 0.0
        except subprocess.TimeoutExpired:
            sent = time.monotonic()
            if group:
                os.killpg(process.pid, signum)
            else:
                process.send_signal(signum)
            code = process.wait()
            _wait_gone(process.pid, project, 600)  # with the pipeline's processes, which clean up after the command
            gone = time.monotonic() - sent
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    said = [line for line in stderr.splitlines() if line.startswith("stele-bench: ")]
    tail = " | ".join(stderr.strip().splitlines()[-3:])
    left = len(_on_engine(leases) - before)
    return Kill(number, signum, group, delay, attempts, code, gone, "Traceback" in stderr, len(said), left, tail)


def _paid_twice(store: Store) -> list[str]:
    """Paired attempts whose action key has more than one recorded result."""
    keys = Counter(result.key for result in recorded_from(store, 0.0))
    twice = []
    for key, count in keys.items():
        if count > 1 and store.get_document(key, ActionKey).stage == "paired-attempt":
            twice.append(f"{key} recorded {count} times")
    return twice


def _clean_run(project: Path, leases: Path) -> list[str]:
    findings = []
    command = [sys.executable, "-m", "bench", "--project", str(project), "--json", "demo"]
    command += ["--attempts", str(MOST_ATTEMPTS)]
    done = subprocess.run(command, cwd=REPO, env=_environment(leases), capture_output=True, text=True)
    result = json.loads(done.stdout.splitlines()[-1]) if done.stdout.strip() else {}
    if done.returncode != 0 or not result.get("verified"):
        findings.append(f"the clean run exited {done.returncode}, verified={result.get('verified')}")
        findings.append(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "(no stderr)")
    fsck = [sys.executable, "-m", "bench", "--project", str(project), "--json", "store", "fsck"]
    checked = subprocess.run(fsck, cwd=REPO, env=_environment(leases), capture_output=True, text=True)
    report = json.loads(checked.stdout) if checked.stdout.strip() else {}
    if checked.returncode != 0:
        summary = {key: report.get(key) for key in ("status", "missing", "corrupt") if key in report}
        findings.append(f"store fsck exited {checked.returncode}: {json.dumps(summary)[:600]}")
    findings += [f"paid twice: {line}" for line in _paid_twice(Store(project / "store"))]
    left = _on_engine(leases)
    if left:
        findings.append(f"{len(left)} containers or networks left on the engine")
    findings += [f"process left: {line}" for line in _processes_of(project)]
    findings += [f"lease left: {path.name}" for path in leases.glob("*.json")]
    return findings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--project", type=Path, default=None, help="default: a fresh project in a temporary directory")
    parser.add_argument("--longest", type=float, default=100.0, help="the longest a run lives before its kill")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    project = (args.project or work / "project").resolve()
    leases = work / "leases"
    if not (project / "stele-bench.toml").is_file():
        subprocess.run([sys.executable, "-m", "bench", "init", str(project)], cwd=REPO, check=True)
    print(f"soak: {args.runs} killed demo runs in {project}, seed {seed}", flush=True)
    findings: list[str] = []
    for number in range(1, args.runs + 1):
        kill = _killed_run(number, project, leases, rng, args.longest)
        target = "group" if kill.group else "command"
        print(
            f"run {number:2}: --attempts {kill.attempts}, {kill.signum.name} to the {target} "
            f"after {kill.delay:5.1f} s: "
            f"exit {kill.code}, processes gone {kill.gone_seconds:4.1f} s after the signal, {kill.left} left on the "
            f"engine{'; ' + '; '.join(kill.findings()) if kill.findings() else ''}",
            flush=True,
        )
        findings += [f"run {number}: {finding} (stderr ends: {kill.tail[-400:]})" for finding in kill.findings()]
    findings += _clean_run(project, leases)
    print("clean run: " + ("verified, nothing left over, fsck clean, no pair paid twice" if not findings else ""))
    for finding in findings:
        print(f"FINDING {finding}")
    print(f"soak: {'PASS' if not findings else 'FAIL'} ({len(findings)} findings)")
    raise SystemExit(1 if findings else 0)


if __name__ == "__main__":
    main()
