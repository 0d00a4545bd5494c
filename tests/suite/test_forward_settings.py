"""Forward mode's settings: the suite declares the gateway's forward terms and the fence's terms, each defined once;
a declaration's bytes stay as they were."""

from __future__ import annotations

import ast
from decimal import Decimal
from pathlib import Path

from bench.contracts import canonical_bytes
from bench.fence import ArmCap, FenceConfig, FenceTerms, PairCaps
from bench.gateway import ArmKey, ForwardTerms, GatewayConfig, Mode, UpstreamAuth
from bench.suite.forward import FenceDeclaration, ForwardSettings

PACKAGE = Path(__file__).resolve().parents[2] / "bench"
PRICE = {"input": Decimal(1), "output": Decimal("2.5"), "cache_write": Decimal(1), "cache_read": Decimal(0)}
DECLARATION = FenceDeclaration(
    quota_url_env="QUOTA_URL", key_sha256="a" * 64, production_reserve_usd=Decimal("3.1"), timeout_seconds=20.0
)


def test_a_declaration_s_terms_become_the_fence_config_unchanged() -> None:
    config = DECLARATION.config("https://quota.test/", "PROVIDER_KEY")
    assert isinstance(config, FenceConfig)
    assert config.base_url == "https://quota.test" and config.key_env == "PROVIDER_KEY"
    for name in FenceTerms.model_fields:
        assert getattr(config, name) == getattr(DECLARATION, name)


def test_forward_settings_encode_to_the_bytes_they_had_before_the_terms_were_shared() -> None:
    """Pinned from the flat FenceDeclaration the shared terms replaced: a suite declaring forward mode keeps its
    digest, and so every action key that carries it."""
    settings = ForwardSettings(
        upstream_env="UP",
        key_env="KEY",
        prices={"m": PRICE},  # type: ignore[dict-item]
        arm_cap_usd=Decimal(1),
        pair_cap_usd=Decimal(2),
        fence=DECLARATION,
    )
    assert canonical_bytes(settings) == (
        b'{"arm_cap_usd":"1","fence":{"key_sha256":"' + b"a" * 64 + b'","production_reserve_usd":"3.1",'
        b'"quota_url_env":"QUOTA_URL","timeout_seconds":20.0},"key_env":"KEY","pair_cap_usd":"2",'
        b'"prices":{"m":{"cache_read":"0","cache_write":"1","input":"1","output":"2.5"}},"provider_error_limit":3,'
        b'"unfenced":null,"upstream_auth":"x-api-key","upstream_env":"UP"}'
    )


def test_a_suite_s_forward_terms_are_the_gateway_s_one_settings_type() -> None:
    """Forward mode has one settings type: the suite declares the gateway's ``ForwardTerms`` (as a subclass, its
    bytes unchanged, pinned above) and each arm's gateway config carries those terms as they were declared."""
    settings = ForwardSettings(
        upstream_env="UP",
        key_env="KEY",
        upstream_auth=UpstreamAuth.BEARER,
        prices={"m": PRICE},  # type: ignore[dict-item]
        arm_cap_usd=Decimal(1),
        pair_cap_usd=Decimal(2),
        unfenced="no quota API for this provider",
        provider_error_limit=7,
    )
    assert isinstance(settings, ForwardTerms)
    terms = settings.terms()
    assert type(terms) is ForwardTerms
    assert terms.model_dump() == settings.model_dump(include=set(ForwardTerms.model_fields))
    arm = ArmKey(label="one", key_sha256="1" * 64)
    caps = PairCaps(arms=(ArmCap(arm="one", cap_usd=Decimal(1)),))
    config = GatewayConfig(mode=Mode.FORWARD, arms=(arm,), upstream="https://up.test", forward=terms, caps=caps)
    assert config.forward == terms


def test_the_forward_terms_are_declared_once() -> None:
    """No other model in bench/ declares a forward term as a field of its own (the fence's ``key_env`` names the
    quota API's key, the fence's own term)."""
    terms = set(ForwardTerms.model_fields)
    declared = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = {
                    s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                }
                declared += [f"{path.relative_to(PACKAGE)}:{node.name}.{name}" for name in sorted(names & terms)]
    owned = {f"gateway/config.py:ForwardTerms.{name}" for name in terms} | {"fence/config.py:FenceConfig.key_env"}
    assert set(declared) == owned
