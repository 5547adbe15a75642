"""Publishing stages: what happens to the dataset folder after synthesis.

The Hub token is never part of the config: huggingface_hub reads it from ``HF_TOKEN`` or from
the login cache (``hf auth login``), so nothing secret reaches the run directory. A run with
``publish=hub`` checks the token and the repo id before exploration starts (:meth:`HubPublisher.check`);
a push that fails after synthesis keeps the local dataset and names the command that retries it:
``kernelsynth-tools publish <run or sweep dir> --repo-id org/name``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

from .config import PublishConfig as _D  # the defaults, written once
from .errors import UserError

log = logging.getLogger(__name__)


class PublishError(Exception):
    """The push failed (network, authentication, permission); the message is one line."""


class NoPublish:
    """Keep the dataset in the run directory (the default)."""

    repo_id: Optional[str] = None

    def __init__(self, **_ignored):
        pass

    def check(self) -> None:
        pass

    def run(self, dataset_dir: Path, records: Optional[int] = None) -> Optional[str]:
        """Log where the dataset stays; with ``records`` 0, without the hint to publish it (an empty
        dataset is nothing to push)."""
        if records == 0:
            log.info("dataset kept at %s (no records)", dataset_dir)
        else:
            log.info("dataset kept at %s (publish=hub publish.repo_id=org/name pushes it)", dataset_dir)
        return None


def check_hub(repo_id: Optional[str]) -> None:
    """Raise UserError (one line) unless ``repo_id`` is ``namespace/name`` and a Hub token is
    available (``HF_TOKEN`` or the huggingface_hub login). Makes no network call."""
    from huggingface_hub import get_token
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if not repo_id:
        raise UserError("publish: publish.repo_id is not set (publish=hub publish.repo_id=org/name)")
    if repo_id.count("/") != 1:
        raise UserError(f"publish: repo id {repo_id!r} is not of the form org/name (publish.repo_id=org/name)")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as e:
        raise UserError(f"publish: repo id {repo_id!r} is not valid: {str(e).splitlines()[0]}") from None
    if not get_token():
        raise UserError("publish: no Hugging Face token: set HF_TOKEN or run `hf auth login` "
                        "(checked before any work, so nothing ran)")


def push(dataset_dir: Path, repo_id: str, private: bool = True, commit_message: str = "Add kernelsynth records") -> str:
    """Create the dataset repo if needed and upload ``dataset_dir`` (card, data files and the
    charts the card embeds) in one commit. Returns the repo's URL. Raises PublishError with one line on any failure."""
    from huggingface_hub import HfApi

    try:
        api = HfApi()
        repo = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(folder_path=str(dataset_dir), repo_id=repo_id, repo_type="dataset",
                          commit_message=commit_message, allow_patterns=["README.md", "data/**", "charts/*.png"])
    except Exception as e:  # noqa: BLE001 - httpx, HfHubHTTPError, OSError: all mean "not pushed"
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise PublishError(f"{type(e).__name__}: {msg}"[:300]) from e
    url = str(repo)
    log.info("published %s", url)
    return url


class HubPublisher:
    """Upload the dataset folder to a Hub dataset repo (created if missing). Returns its URL."""

    def __init__(self, repo_id: str, private: bool = _D.private, commit_message: str = _D.commit_message):
        self.repo_id, self.private, self.commit_message = repo_id, private, commit_message

    def check(self) -> None:
        check_hub(self.repo_id)

    def run(self, dataset_dir: Path, records: Optional[int] = None) -> Optional[str]:
        """Push ``dataset_dir`` (``records``: its record count, unused: an empty dataset is pushed too,
        as asked). Returns the repo URL."""
        return push(dataset_dir, self.repo_id, self.private, self.commit_message)
