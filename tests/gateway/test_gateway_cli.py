from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from loopback import (
    KEY,
    KEY_ENV,
    MODEL,
    PRICE,
    PROVIDER_KEY,
    AnthropicDouble,
    arm,
    caps,
    post,
    request_body,
    serve_double,
    write_policy,
)

from bench.gateway import ForwardTerms, GatewayConfig, Mode, Refusal, read_exchanges

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
            assert post(started["url"], "/v1/messages?beta=true", request_body("hi")).status == 200
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=120) == 0  # the timeout guards against a hang; the exit is the claim
    assert [r.rule for r in read_exchanges(tmp_path / "log")] == ["default"]


def test_serve_refuses_a_policy_that_changed_after_pinning(tmp_path: Path) -> None:
    config = GatewayConfig(mode=Mode.POLICY, arms=(arm("one", KEY),), policy=write_policy(tmp_path))
    (tmp_path / "gateway.json").write_text(config.model_dump_json())
    (tmp_path / "policy.json").write_text("{}")
    argv = [sys.executable, "-m", "bench", "gateway", "serve", "--config", str(tmp_path / "gateway.json")]
    done = subprocess.run([*argv, "--log-dir", str(tmp_path / "log")], cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode != 0 and b"re-pin the config" in done.stderr


def test_serve_forward_mode_from_a_config_file_that_names_the_key_and_holds_the_caps(tmp_path: Path) -> None:
    double = AnthropicDouble()
    worst = PRICE.upper_bound(len(json.dumps(request_body("hi")).encode()), 1024)  # the cap fits one request exactly
    with serve_double(double) as url:
        config = GatewayConfig(
            mode=Mode.FORWARD, arms=(arm("one", KEY),), upstream=url,
            forward=ForwardTerms(key_env=KEY_ENV, prices={MODEL: PRICE}), caps=caps(one=str(worst)),
        )  # fmt: skip
        (tmp_path / "gateway.json").write_text(config.model_dump_json())
        argv = [sys.executable, "-m", "bench", "--json", "gateway", "serve"]
        argv += ["--config", str(tmp_path / "gateway.json"), "--log-dir", str(tmp_path / "log")]
        environ = {**os.environ, KEY_ENV: PROVIDER_KEY}
        with subprocess.Popen(argv, cwd=ROOT, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
            try:
                assert process.stdout is not None
                started = json.loads(process.stdout.readline())
                assert started["mode"] == "forward"
                statuses = [post(started["url"], "/v1/messages", request_body("hi")).status for _ in range(2)]
            finally:
                process.send_signal(signal.SIGTERM)
                out, err = process.communicate(timeout=120)  # a hang guard, not a measure
    assert process.returncode == 0 and statuses == [200, 400]  # the cap from the file holds one worst case
    records = read_exchanges(tmp_path / "log")
    assert [r.refusal for r in records] == [None, Refusal.CAP_REACHED]
    assert PROVIDER_KEY not in (tmp_path / "gateway.json").read_text() + out.decode() + err.decode()
    assert PROVIDER_KEY not in (tmp_path / "log" / "exchanges.jsonl").read_text()


def test_the_readme_forward_mode_examples_are_valid_configs() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Forward mode", 1)[1].split("\n## ", 1)[0]
    examples = [block.split("```", 1)[0] for block in section.split("```json\n")[1:]]
    configs = [GatewayConfig.model_validate_json(example) for example in examples]
    auth = [(c.mode, c.forward.upstream_auth.value if c.forward else None) for c in configs]
    assert auth == [(Mode.FORWARD, "x-api-key"), (Mode.FORWARD, "bearer")]
    assert all(c.caps is not None and c.caps.pair_cap_usd == 5 for c in configs)
