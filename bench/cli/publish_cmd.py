"""`stele-bench publish BUNDLE [--check] [--sign-key FILE]`, `stele-bench verify MANIFEST --trust PUBKEY|--unsigned`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..publish import MANIFEST_NAME, ClaimKind, Verification, check_bundle, verify
from ..publish.release import sign
from ..publish.signing import SIGNATURE_NAME, load_private_key, load_public_key
from ..publish.verification import Trust
from ..run.catalogue import STAGES
from ..stages.publish import publish_directory
from .numbers import confidence
from .output import Output

__all__ = ["register", "trust_of", "verification_json", "verification_lines", "verify_bundle"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("publish")
    parser.add_argument("bundle", type=Path, help="bundle directory (records/, admissions/, manifests/)")
    parser.add_argument(
        "--confidence", type=confidence, default="0.95", help="confidence level of every interval (default 0.95)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"only run the publication checks on an already published bundle's {MANIFEST_NAME}",
    )
    parser.add_argument(
        "--sign-key",
        type=Path,
        metavar="FILE",
        help=f"sign the bundle's statement with this ed25519 key (`stele-bench key generate`), as {SIGNATURE_NAME}",
    )
    parser.set_defaults(handler=_publish)
    check = subparsers.add_parser(
        "verify",
    )
    check.add_argument("manifest", type=Path, help=f"the bundle's {MANIFEST_NAME}")
    check.add_argument(
        "--trust",
        type=Path,
        action="append",
        default=[],
        metavar="PUBKEY",
        help="a publisher's public key (PEM) whose signature the attested claims may rest on; repeatable",
    )
    check.add_argument(
        "--unsigned",
        action="store_true",
        help="verify without a signature: what is re-derived is checked, what is attested rests on nothing",
    )
    check.set_defaults(handler=_verify)


def _publish(args: argparse.Namespace, out: Output) -> int:
    if args.check:
        if args.sign_key is not None:
            raise UsageError("--check only checks; sign with `publish BUNDLE --sign-key FILE`", field="--sign-key")
        findings = check_bundle(args.bundle / MANIFEST_NAME)
        lines = [str(f) for f in findings] or ["publication checks passed"]
        out.result({"passed": not findings, "findings": [str(f) for f in findings]}, "\n".join(lines))
        return 1 if findings else 0
    key = load_private_key(args.sign_key) if args.sign_key is not None else None  # an unreadable key: before anything
    manifest = publish_directory(args.bundle, args.confidence)
    signer = sign(args.bundle, key) if key is not None else None
    text = f"published {len(manifest.files)} files: {args.bundle / MANIFEST_NAME}"
    text += f"\nsigned with key {signer}" if signer else "\nunsigned: `verify` accepts it only with --unsigned"
    data = {"manifest": str(args.bundle / MANIFEST_NAME), "files": len(manifest.files), "signed_by": signer}
    out.result(data, text)
    return 0


def verify_bundle(manifest: Path, trust: Trust) -> Verification:
    """``verify`` with the stages this release declares: what the commands and the demo run."""
    return verify(manifest, STAGES, trust)


def verification_json(verification: Verification) -> dict[str, Any]:
    signature = verification.signature
    return {
        "verified": verification.verified,
        "claims": {kind.value: counts for kind, counts in verification.counts().items()},
        "cross_checked": verification.cross_checked(),
        "signature": {"signed_by": signature.signer, "present": signature.present, "checked": signature.checked},
        "differences": [
            {"path": d.path, "recorded": d.recorded, "actual": d.actual, "how": d.how, "lineage": list(d.lineage)}
            for d in verification.differences
        ],
    }


def _listing(counts: dict[str, int]) -> str:
    return ", ".join(f"{stage} {count}" for stage, count in sorted(counts.items())) or "none"


def verification_lines(verification: Verification) -> list[str]:
    """What was re-derived, what was cross-checked, what rests on the signature and who signed; then ``verified``
    or every difference."""
    counts = verification.counts()
    signature = verification.signature
    signer = signature.signer
    rests = "the publisher's signature" if signer else "nothing: no trusted signature"
    lines = [
        f"re-derived from the bundle (checked here): {_listing(counts[ClaimKind.REDERIVED])}",
        f"attested (resting on {rests}): {_listing(counts[ClaimKind.ATTESTED])}",
    ]
    if verification.cross_checked():
        lines.append(f"  of which outputs re-derived from the bundle: {_listing(verification.cross_checked())}")
    if signer:
        lines.append(f"signed by ed25519 key {signer[:16]} (trusted): what is attested rests on that signature")
    elif signature.checked:
        lines.append("the signature does not hold for a trusted key: what is attested rests on nothing")
    elif signature.present:
        lines.append("signature not checked (--unsigned): what is attested rests on nothing")
    else:
        lines.append("unsigned (--unsigned): what is attested rests on nothing")
    if verification.verified:
        return [*lines, "verified"]
    return [*lines, "NOT verified:", *(f"  {difference}" for difference in verification.differences)]


def trust_of(keys: list[Path], unsigned: bool) -> Trust:
    """What ``--trust`` and ``--unsigned`` ask for; neither is refused: a bundle is verified against a key, or the
    reader says they accept none."""
    if not keys and not unsigned:
        raise UsageError(
            "verify needs the publisher's public key: --trust PUBKEY, or --unsigned to check only what is re-derived",
            field="--trust",
        )
    return Trust(keys=tuple(load_public_key(path) for path in keys), unsigned=unsigned)


def _verify(args: argparse.Namespace, out: Output) -> int:
    verification = verify_bundle(args.manifest, trust_of(args.trust, args.unsigned))
    out.result(verification_json(verification), "\n".join(verification_lines(verification)))
    return 0 if verification.verified else 1
