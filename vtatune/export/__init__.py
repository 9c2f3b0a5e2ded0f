"""Deployment bundles of stored designs (``bundle``) and their verification (``verify``)."""

from __future__ import annotations

from vtatune.export.bundle import (
    BUNDLE_FILES,
    BUNDLE_FORMAT,
    MANIFEST,
    PICKS,
    BundleResult,
    pick_trial,
    write_bundle,
)
from vtatune.export.verify import Check, VerifyReport, read_manifest, verify_bundle

__all__ = ["BUNDLE_FILES", "BUNDLE_FORMAT", "MANIFEST", "PICKS", "BundleResult", "Check",
           "VerifyReport", "pick_trial", "read_manifest", "verify_bundle", "write_bundle"]
