"""A client for the provider's quota API (OpenRouter-shaped), standard library only.

Two endpoints, both ``GET`` with ``Authorization: Bearer <key>``::

    /api/v1/key      {"data": {"label": ..., "limit": 25 | null, "limit_remaining": ..., "usage": ...}}
    /api/v1/credits  {"data": {"total_credits": ..., "total_usage": ...}}

Money is parsed straight from the JSON text into :class:`~decimal.Decimal`, never through a float. Errors of the
transport and of urllib are translated here, once, into :mod:`bench.fence.errors`; nothing above this module sees a
urllib exception. The key is held only for the Authorization header and appears in no message or repr.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from .errors import KeyRejected, ProviderError, ProviderResponseInvalid, ProviderUnreachable

__all__ = ["Credits", "KeyInfo", "ProviderClient"]

KEY_PATH = "/api/v1/key"
CREDITS_PATH = "/api/v1/credits"
_MAX_BODY = 1 << 20  # a quota answer is a few hundred bytes; anything near this is not one


class _RefuseRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as the 3xx it is: the quota API has no reason to send the key anywhere else."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_RefuseRedirect)


@dataclass(frozen=True)
class KeyInfo:
    label: str | None
    limit_usd: Decimal | None  # None: the key has no ceiling of its own
    limit_remaining_usd: Decimal | None
    usage_usd: Decimal


@dataclass(frozen=True)
class Credits:
    total_credits_usd: Decimal
    total_usage_usd: Decimal

    @property
    def balance_usd(self) -> Decimal:
        return self.total_credits_usd - self.total_usage_usd


@dataclass(frozen=True)
class ProviderClient:
    base_url: str
    key: str = field(repr=False)
    timeout_seconds: float

    def key_info(self) -> KeyInfo:
        url, data = self._get(KEY_PATH)
        label = data.get("label")
        return KeyInfo(
            label=label if isinstance(label, str) else None,
            limit_usd=_usd_or_none(url, data, "limit"),
            limit_remaining_usd=_usd_or_none(url, data, "limit_remaining"),
            usage_usd=_usd(url, data, "usage"),
        )

    def credits(self) -> Credits:
        url, data = self._get(CREDITS_PATH)
        return Credits(
            total_credits_usd=_usd(url, data, "total_credits"),
            total_usage_usd=_usd(url, data, "total_usage"),
        )

    def _get(self, path: str) -> tuple[str, dict[str, Any]]:
        """The ``data`` object of one GET; the boundary where transport errors become ours."""
        url = self.base_url + path
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        request.add_unredirected_header("Authorization", f"Bearer {self.key}")
        try:
            with _OPENER.open(request, timeout=self.timeout_seconds) as response:
                body = response.read(_MAX_BODY)
        except urllib.error.HTTPError as exc:
            raise _http_error(url, exc) from exc
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            raise ProviderUnreachable(url, f"transport failed: {exc}; check the base URL and the network") from exc
        return url, _data_object(url, body)


def _http_error(url: str, exc: urllib.error.HTTPError) -> ProviderError:
    try:
        message = _error_message(exc.read(_MAX_BODY))
    except (http.client.HTTPException, OSError):
        message = str(exc.reason)
    finally:
        exc.close()
    if exc.code in (401, 403):
        return KeyRejected(url, exc.code, message)
    if exc.code == 429 or exc.code >= 500:
        return ProviderUnreachable(url, f"the provider answered {exc.code}: {message}")
    return ProviderResponseInvalid(url, f"unexpected status {exc.code}: {message}")


def _error_message(body: bytes) -> str:
    """The provider's ``error.message`` when the body has one, else the body's first characters."""
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return body[:200].decode("utf-8", "replace") or "(empty body)"
    return str(message)


def _data_object(url: str, body: bytes) -> dict[str, Any]:
    try:
        document = json.loads(body, parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constant)
    except ValueError as exc:
        raise ProviderResponseInvalid(url, f"the answer is not JSON: {exc}") from exc
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, dict):
        raise ProviderResponseInvalid(url, f"expected an object with a `data` object, got {body[:200]!r}")
    return data


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number")


def _field(url: str, data: dict[str, Any], name: str) -> Any:
    if name not in data:
        raise ProviderResponseInvalid(url, f"the answer has no `data.{name}`; fields: {sorted(data)}")
    return data[name]


def _amount(url: str, name: str, value: Any) -> Decimal:
    """An amount from a JSON number or a numeric string; anything else (bool, NaN, text) is refused."""
    try:
        amount = Decimal(value) if isinstance(value, str | Decimal) else None
    except InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite():
        raise ProviderResponseInvalid(url, f"`data.{name}` must be a finite amount in USD, got {value!r}")
    return amount


def _usd(url: str, data: dict[str, Any], name: str) -> Decimal:
    return _amount(url, name, _field(url, data, name))


def _usd_or_none(url: str, data: dict[str, Any], name: str) -> Decimal | None:
    """A nullable amount: null means "none", a missing field is still an error, never zero."""
    value = _field(url, data, name)
    return None if value is None else _amount(url, name, value)
