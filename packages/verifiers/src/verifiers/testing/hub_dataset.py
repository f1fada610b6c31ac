"""A dataset folder that `datasets.load_dataset` reads like a Hugging Face hub repository.

Environments load their real data with ``datasets.load_dataset(name, config, split=split)``;
testing which name, config and split they ask for needs a repository with several of each. A
folder with one JSON-lines file per (config, split) and the ``configs:`` block of a dataset
card in its README is read by the same call, offline, with no stand-in for ``datasets``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["write_hub_dataset"]


def write_hub_dataset(
    folder: str | Path, splits: Mapping[str | tuple[str, str], Sequence[Mapping[str, Any]]]
) -> Path:
    """Write ``splits`` into ``folder`` as a hub-style dataset and return the folder.

    Keys are ``(config, split)`` pairs, or a split name alone for the ``default`` config;
    values are the rows. ``datasets.load_dataset(str(folder), config, split=split)`` then
    returns exactly those rows (set ``HF_HUB_OFFLINE=1`` so nothing is looked up online).
    """
    folder = Path(folder)
    layout: dict[str, list[tuple[str, str]]] = {}
    for key, rows in splits.items():
        config, split = key if isinstance(key, tuple) else ("default", key)
        text = "".join(json.dumps(dict(row)) + "\n" for row in rows)
        # The content's hash in the file name: `datasets` caches a build under a key made of
        # the card's file names, so other rows under the same name would read stale.
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        relative = f"{config}/{split}-{digest}.jsonl"
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        layout.setdefault(config, []).append((split, relative))
    card = ["---", "configs:"]
    for config, files in layout.items():
        card += [f"- config_name: {config}", "  data_files:"]
        card += [f"  - split: {split}\n    path: {relative}" for split, relative in files]
    (folder / "README.md").write_text("\n".join([*card, "---", ""]))
    return folder
