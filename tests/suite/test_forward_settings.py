"""Forward settings and the fence config share one set of fence terms; a declaration's bytes stay as they were."""

from __future__ import annotations

from decimal import Decimal

from bench.contracts import canonical_bytes
from bench.fence import FenceConfig, FenceTerms
from bench.suite.forward import FenceDeclaration, ForwardSettings

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
