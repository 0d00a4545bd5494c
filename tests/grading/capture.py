"""Run the two-arm scenario on the real CLI against a policy-mode gateway and keep everything it produced.

Used by the real-CLI tests, and as a script to refresh the parser fixtures in ``data/``:
``python tests/grading/capture.py`` (needs the CLI and, as root, the user ``agentuser``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from claude_host import Home, make_dir, run_claude
from scenario import FOLLOW_UP, PROMPT, hooks, policy_for, write_workspace

from bench.gateway import ArmKey, DirectoryRecorder, Gateway, GatewayConfig, Mode, PolicyPin

__all__ = ["API_KEY", "ArmCapture", "capture_arm", "policy_gateway_config", "scratch_dirs"]

API_KEY = "sk-local-0000"


@dataclass(frozen=True)
class ArmCapture:
    workspace: str  # where it ran (the paths in the transcript name it)
    session_id: str
    resumed_session_id: str
    stream: bytes
    resume_stream: bytes
    session: bytes  # the session JSONL after both prompts
    exchanges: bytes  # the gateway's exchange log


@contextmanager
def scratch_dirs() -> Iterator[dict[str, Path]]:
    """Workspace, memory hook, gateway and spare directories, removed afterwards."""
    made = {name: make_dir(f"{name}-") for name in ("ws", "mem", "gw")}
    try:
        yield made
    finally:
        for path in made.values():
            shutil.rmtree(path, ignore_errors=True)


def policy_gateway_config(policy: bytes, directory: Path, key: str = API_KEY) -> GatewayConfig:
    (directory / "policy.json").write_bytes(policy)
    return GatewayConfig(
        mode=Mode.POLICY,
        arms=(ArmKey(label="arm", key_sha256=hashlib.sha256(key.encode()).hexdigest()),),
        policy=PolicyPin(path="policy.json", sha256=hashlib.sha256(policy).hexdigest()),
    )


def capture_arm(with_hooks: bool, extra_files: Mapping[str, str] | None = None) -> ArmCapture:
    with scratch_dirs() as dirs:
        workspace = dirs["ws"]
        write_workspace(workspace)
        for name, text in (extra_files or {}).items():
            (workspace / name).write_text(text)
        home = Home.create(hooks(dirs["mem"]) if with_hooks else None)
        try:
            config = policy_gateway_config(policy_for(workspace), dirs["gw"])
            with Gateway(config, DirectoryRecorder(dirs["gw"] / "log"), policy_root=dirs["gw"]) as gateway:
                first = run_claude(workspace, home, gateway.url, API_KEY, PROMPT)
                second = run_claude(workspace, home, gateway.url, API_KEY, FOLLOW_UP, resume=first.session_id)
            return ArmCapture(
                workspace=str(workspace),
                session_id=first.session_id,
                resumed_session_id=second.session_id,
                stream=first.stream,
                resume_stream=second.stream,
                session=home.session_file(first.session_id).read_bytes(),
                exchanges=(dirs["gw"] / "log" / "exchanges.jsonl").read_bytes(),
            )
        finally:
            shutil.rmtree(home.path, ignore_errors=True)


def main() -> None:
    data = Path(__file__).parent / "data"
    data.mkdir(exist_ok=True)
    meta = {}
    for name, with_hooks in (("with-hooks", True), ("without-hooks", False)):
        arm = capture_arm(with_hooks)
        (data / f"{name}.stream.jsonl").write_bytes(arm.stream)
        (data / f"{name}.resume.stream.jsonl").write_bytes(arm.resume_stream)
        (data / f"{name}.session.jsonl").write_bytes(arm.session)
        (data / f"{name}.exchanges.jsonl").write_bytes(arm.exchanges)
        meta[name] = {"workspace": arm.workspace, "session_id": arm.session_id, "resumed": arm.resumed_session_id}
    (data / "capture.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
