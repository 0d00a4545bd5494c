"""The publisher's signature: a DSSE envelope around the bundle's in-toto statement, signed with ed25519.

A bundle's statement lists every file the manifest covers with its SHA-256 and BLAKE3, so signing it signs every
byte of the bundle. The envelope (``provenance.dsse.json``, beside ``MANIFEST.json`` and outside its coverage) is
the DSSE v1 format in-toto attestations use: ``payloadType``, the statement as base64 ``payload``, and one
signature over the pre-authentication encoding (PAE) of the two, naming its key by ``keyid``, the SHA-256 of the
raw public key. ``verify --trust KEY`` checks the envelope's payload is the statement rebuilt from the files and
its signature is by a trusted key: what ``verify`` cannot re-derive (a container run, a file it has only a listing
of) then rests on that signature, and the command says which claims those are.

Keys are PEM files (``stele-bench key generate``): the private key PKCS#8, written only for its owner (mode 0600);
the public key SubjectPublicKeyInfo, ``<key>.pub``. A private key is never published: the publication checks
refuse any file holding one.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Final, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import Field

from ..contracts import ContractModel, canonical_bytes
from ..contracts.checked_files import read_bounded
from ..contracts.files import parse_contract
from ..errors import ContractError, SystemRefused, UsageError

__all__ = [
    "PAYLOAD_TYPE",
    "SIGNATURE_NAME",
    "Envelope",
    "EnvelopeSignature",
    "PublicKey",
    "generate_key",
    "key_id",
    "load_private_key",
    "load_public_key",
    "public_key_path",
    "read_envelope",
    "sign_statement",
    "signed_by",
]

SIGNATURE_NAME = "provenance.dsse.json"
PAYLOAD_TYPE: Final = "application/vnd.in-toto+json"

PublicKey = Ed25519PublicKey


class EnvelopeSignature(ContractModel):
    keyid: str = Field(pattern=r"^[0-9a-f]{64}$")
    sig: str = Field(min_length=1)


class Envelope(ContractModel):
    """A DSSE envelope (field names as the DSSE specification spells them)."""

    payloadType: Literal["application/vnd.in-toto+json"]  # the DSSE field name, as the specification spells it
    payload: str
    signatures: tuple[EnvelopeSignature, ...] = Field(min_length=1)

    def statement(self) -> bytes:
        try:
            return base64.b64decode(self.payload, validate=True)
        except ValueError as exc:
            raise ContractError(f"{SIGNATURE_NAME}: its payload is not base64 ({exc})", path=SIGNATURE_NAME) from None


def _pae(payload: bytes) -> bytes:
    """DSSE v1's pre-authentication encoding: what is signed, so a payload cannot be read as another type."""
    kind = PAYLOAD_TYPE.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def key_id(key: PublicKey) -> str:
    """The SHA-256 of the raw public key, as the envelope names its signer."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def sign_statement(statement: bytes, key: Ed25519PrivateKey) -> bytes:
    """The envelope of ``statement`` signed with ``key``, as canonical JSON (ed25519 is deterministic: the same
    statement and key always give the same bytes)."""
    signature = EnvelopeSignature(
        keyid=key_id(key.public_key()), sig=base64.b64encode(key.sign(_pae(statement))).decode()
    )
    envelope = Envelope(payloadType=PAYLOAD_TYPE, payload=base64.b64encode(statement).decode(), signatures=(signature,))
    return canonical_bytes(envelope)


def read_envelope(data: bytes) -> Envelope:
    return parse_contract(data, Envelope, SIGNATURE_NAME)


def signed_by(envelope: Envelope, trusted: list[PublicKey]) -> str | None:
    """The key id of a trusted key whose signature over the envelope's payload holds, or None."""
    message = _pae(envelope.statement())
    by_id = {key_id(key): key for key in trusted}
    for signature in envelope.signatures:
        key = by_id.get(signature.keyid)
        if key is None:
            continue
        try:
            key.verify(base64.b64decode(signature.sig, validate=True), message)
        except (InvalidSignature, ValueError):
            continue
        return signature.keyid
    return None


def public_key_path(path: Path) -> Path:
    """Where the public half of the private key at ``path`` is kept: ``<path>.pub``."""
    return path.with_name(path.name + ".pub")


def generate_key(path: Path) -> tuple[Path, Path, str]:
    """A new ed25519 key at ``path`` (private, mode 0600) and ``path.pub``; an existing file is never replaced."""
    if not path.name or path.is_dir():
        raise UsageError(
            f"{str(path)!r} is no file name for a key", field="path", hint="name a file, e.g. keys/publisher.key"
        )
    public_path = public_key_path(path)
    for target in (path, public_path):
        if target.exists():
            raise UsageError(f"{target} exists; a key is never overwritten", field="path", hint="name another file")
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(private)
        public_path.write_bytes(public)
    except OSError as exc:
        raise SystemRefused.of(exc) from exc
    return path, public_path, key_id(key.public_key())


def _read(path: Path, what: str) -> bytes:
    return read_bounded(path, f"the {what}", max_bytes=64 * 1024)  # a key or a signature file is under a kilobyte


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(_read(path, "signing key"), password=None)
    except (ValueError, TypeError) as exc:
        raise ContractError(f"{path} is not an unencrypted PEM private key: {exc}", path=str(path)) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ContractError(f"{path} is not an ed25519 key; make one with `stele-bench key generate`", path=str(path))
    return key


def load_public_key(path: Path) -> PublicKey:
    try:
        key = serialization.load_pem_public_key(_read(path, "public key"))
    except (ValueError, TypeError) as exc:
        raise ContractError(f"{path} is not a PEM public key: {exc}", path=str(path)) from None
    if not isinstance(key, Ed25519PublicKey):
        raise ContractError(f"{path} is not an ed25519 public key", path=str(path))
    return key
