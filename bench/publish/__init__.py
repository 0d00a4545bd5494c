"""Publication: the bundle's layout and lineage, the publication checks, the manifest, the in-toto statement,
verification from the bundle alone, the report and the transcript pages."""

from ..leaks import LEAK_PATTERNS, Check, FileFinding, check_leaks
from .bundle_layout import BundleError, bundle_files
from .checks import PublicationRefused, check_admissions, check_coverage
from .lineage_files import lineage_files, run_actions
from .manifest import MANIFEST_NAME, PublicationLineage, PublicationManifest, PublishedFile, read_manifest
from .provenance import statement
from .release import check_bundle, seal
from .render import render_report
from .svg import MixedKeysError, TrendLine, trend_plot
from .verification import Claim, ClaimKind, Difference, Verification, verify

__all__ = [
    "LEAK_PATTERNS",
    "MANIFEST_NAME",
    "BundleError",
    "Check",
    "Claim",
    "ClaimKind",
    "Difference",
    "FileFinding",
    "MixedKeysError",
    "PublicationLineage",
    "PublicationManifest",
    "PublicationRefused",
    "PublishedFile",
    "TrendLine",
    "Verification",
    "bundle_files",
    "check_admissions",
    "check_bundle",
    "check_coverage",
    "check_leaks",
    "lineage_files",
    "read_manifest",
    "render_report",
    "run_actions",
    "seal",
    "statement",
    "trend_plot",
    "verify",
]
