"""Publishing stages: what happens to the dataset folder after synthesis.

The Hub token is never part of the config: huggingface_hub reads it from ``HF_TOKEN`` or from
the login cache (``hf auth login``), so nothing secret reaches the run directory.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

from .config import PublishConfig as _D  # the defaults, written once

log = logging.getLogger(__name__)


class NoPublish:
    """Keep the dataset in the run directory (the default)."""

    def __init__(self, **_ignored):
        pass

    def run(self, dataset_dir: Path) -> Optional[str]:
        log.info("dataset kept at %s (publish=hub publish.repo_id=org/name pushes it)", dataset_dir)
        return None


class HubPublisher:
    """Upload the dataset folder to a Hub dataset repo (created if missing). Returns its URL.

    Raises huggingface_hub errors unchanged (no token, no permission).
    """

    def __init__(self, repo_id: str, private: bool = _D.private, commit_message: str = _D.commit_message):
        self.repo_id, self.private, self.commit_message = repo_id, private, commit_message

    def run(self, dataset_dir: Path) -> Optional[str]:
        from huggingface_hub import HfApi

        api = HfApi()
        api.create_repo(self.repo_id, repo_type="dataset", private=self.private, exist_ok=True)
        api.upload_folder(folder_path=str(dataset_dir), repo_id=self.repo_id, repo_type="dataset",
                          commit_message=self.commit_message)
        url = f"https://huggingface.co/datasets/{self.repo_id}"
        log.info("published %s", url)
        return url
