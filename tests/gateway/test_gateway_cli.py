from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from loopback import KEY, arm, post, request_body, write_policy

from bench.gateway import GatewayConfig, Mode, read_exchanges

ROOT = Path(__file__).resolve().parents[2]


def test_serve_prints_its_url_answers_and_stops_on_sigterm_with_a_complete_log(tmp_path: Path) -> None:
    config = GatewayConfig(mode=Mode.POLICY, arms=(arm("one", KEY),), policy=write_policy(tmp_path))
    (tmp_path / "gateway.json").write_text(config.model_dump_json())
    argv = [sys.executable, "-m", "bench", "--json", "gateway", "serve"]
    argv += ["--config", str(tmp_path / "gateway.json"), "--log-dir", str(tmp_path / "log")]
    with subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        try:
            assert process.stdout is not None
            started = json.loads(process.stdout.readline())
            assert started["mode"] == "policy"
            status, _, _ = post(started["url"], "/v1/messages?beta=true", request_body("hi"))
            assert status == 200
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=10) == 0
    assert [r.rule for r in read_exchanges(tmp_path / "log")] == ["default"]


def test_serve_refuses_a_policy_that_changed_after_pinning(tmp_path: Path) -> None:
    config = GatewayConfig(mode=Mode.POLICY, arms=(arm("one", KEY),), policy=write_policy(tmp_path))
    (tmp_path / "gateway.json").write_text(config.model_dump_json())
    (tmp_path / "policy.json").write_text("{}")
    argv = [sys.executable, "-m", "bench", "gateway", "serve", "--config", str(tmp_path / "gateway.json")]
    done = subprocess.run([*argv, "--log-dir", str(tmp_path / "log")], cwd=ROOT, capture_output=True, timeout=30)
    assert done.returncode != 0 and b"re-pin the config" in done.stderr
