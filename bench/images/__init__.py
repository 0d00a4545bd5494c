"""Locally built images: tiny (busybox), base (Debian with python3 and git), agent (base plus the agent CLI);
their archives travel through the store to other nodes."""

from .archive import ImageArchive, StoreImages, archive_image
from .build import BuildResult, build_agent, build_image, build_layer, cache_dir
from .labels import ImageName, ImageRecord, find_image, list_images, newest_image_id, require_image
from .scan import ImageNotNeutral, ImageScan, require_neutral_image, scan_image

__all__ = [
    "BuildResult",
    "ImageArchive",
    "ImageName",
    "ImageNotNeutral",
    "ImageRecord",
    "ImageScan",
    "StoreImages",
    "archive_image",
    "build_agent",
    "build_image",
    "build_layer",
    "cache_dir",
    "find_image",
    "list_images",
    "newest_image_id",
    "require_image",
    "require_neutral_image",
    "scan_image",
]
