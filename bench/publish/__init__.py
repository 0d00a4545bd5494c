"""Publication: the manifest covering every published file, the publication checks, verification and the report."""

from .bundle import BundleError, bundle_files
from .checks import (
    LEAK_PATTERNS,
    Check,
    PublicationFinding,
    PublicationRefused,
    check_admissions,
    check_coverage,
    check_leaks,
)
from .manifest import MANIFEST_NAME, PublicationManifest, PublishedFile, Receipt, ReceiptStage, read_manifest
from .receipts import derive, plan_receipts
from .release import check_bundle, publish
from .render import render_report
from .svg import MixedKeysError, TrendLine, trend_plot
from .verify import Difference, receipt_lineage, verify

__all__ = [
    "LEAK_PATTERNS",
    "MANIFEST_NAME",
    "BundleError",
    "Check",
    "Difference",
    "MixedKeysError",
    "PublicationFinding",
    "PublicationManifest",
    "PublicationRefused",
    "PublishedFile",
    "Receipt",
    "ReceiptStage",
    "TrendLine",
    "bundle_files",
    "check_admissions",
    "check_bundle",
    "check_coverage",
    "check_leaks",
    "derive",
    "plan_receipts",
    "publish",
    "read_manifest",
    "receipt_lineage",
    "render_report",
    "trend_plot",
    "verify",
]
