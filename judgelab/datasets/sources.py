"""Where released judge data comes from, and how a file of it is found or fetched.

Every loader asks :func:`fetch_files` for paths relative to a source folder (``LLMBar/``,
``LLM_summeval/``, ``OpenQA-eval/``). A local copy wins: the ``data_dir`` argument, else the
``JUDGELAB_DATA_DIR`` environment variable, each holding the folders side by side. Without
one, the files are downloaded from the source repository at the pinned commit into a cache
folder and checked against the committed sha256 manifest, so a changed upstream file can
never slip silently into an analysis.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from judgelab.errors import JudgelabError

__all__ = ["DEFAULT_BASE_URL", "MANIFEST_DIR", "NOT_UPSTREAM", "SOURCES", "ChecksumError", "DataFormatError",
           "DataNotFoundError", "ManifestEntry", "Source", "SourceInfo", "available_paths", "build_manifest",
           "cache_root", "fetch_files", "local_root", "manifest", "sha256_of", "source_url", "data_location"]

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
MANIFEST_DIR = Path(__file__).with_name("manifests")
_CHUNK = 1 << 20
# Notes added by whoever copied a source locally; they are not in the upstream repository.
NOT_UPSTREAM = frozenset({"LICENSE-NOTE.txt"})
# a path only each source folder holds at its top: a data_dir holding it was one level too deep
_SIGNATURE: dict[str, str] = {"LLMBar": "Dataset/LLMBar", "LLM_summeval": "eval_model_generations",
                              "OpenQA-eval": "data/NQ301_human.tsv", "MT-Bench": "mt_bench/question.jsonl"}


class DataNotFoundError(JudgelabError, FileNotFoundError):
    """A data folder or file that is neither local nor downloadable."""


class ChecksumError(JudgelabError, ValueError):
    """A file whose bytes do not match the committed manifest."""


class DataFormatError(JudgelabError, ValueError):
    """A data file that is there but does not read as its release does (bad JSON, rows that do not line up)."""


@dataclass(frozen=True)
class Source:
    """A public repository pinned at one commit, stored locally under ``folder``."""

    folder: str
    repo: str
    commit: str
    license: str
    # (local prefix, path in the repository) where the local folder's layout is not the repository's own
    upstream: tuple[tuple[str, str], ...] = ()

    def upstream_path(self, path: str) -> str:
        """Where ``path`` (relative to the local folder) lives in the repository."""
        for local, remote in self.upstream:
            if path == local or path.startswith(local.rstrip("/") + "/"):
                return remote + path[len(local):]
        return path


SOURCES: dict[str, Source] = {
    "LLMBar": Source("LLMBar", "princeton-nlp/LLMBar", "900616bff90b6c6c8e1681f7d079250637c55992", "MIT"),
    "LLM_summeval": Source(
        "LLM_summeval",
        "DAMO-NLP-SG/LLM_summeval",
        "bd7dde15817a88940c17574973ff03e750356daa",
        "annotations: SummEval (Fabbri et al. 2021), MIT; judge outputs: no license file (research use)",
    ),
    "OpenQA-eval": Source(
        "OpenQA-eval", "ehsk/OpenQA-eval", "8b9317d0f0c92b52e1c71c0168dff74b5f76a5f4", "MIT"
    ),
    "MT-Bench": Source(
        "MT-Bench", "lm-sys/FastChat", "0e6d3e4beaab66f4d3f93db72541a4abab8af28d", "Apache-2.0",
        upstream=(("mt_bench", "fastchat/llm_judge/data/mt_bench"),
                  ("judge_prompts.jsonl", "fastchat/llm_judge/data/judge_prompts.jsonl")),
    ),
}


@dataclass(frozen=True)
class SourceInfo:
    """Provenance of a loaded data set: repository, commit, license and the files read."""

    repo: str
    commit: str
    license: str
    files: tuple[str, ...]
    location: str  # the local folder, or the cache folder the files were downloaded into


@dataclass(frozen=True)
class ManifestEntry:
    path: str
    sha256: str
    size: int


@cache
def manifest(folder: str) -> dict[str, ManifestEntry]:
    """The committed checksums of one source folder, keyed by path inside the folder."""
    path = MANIFEST_DIR / f"{folder}.json"
    if not path.exists():
        raise DataNotFoundError(f"no checksum manifest for data folder {folder!r} (expected {path})")
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {e["path"]: ManifestEntry(e["path"], e["sha256"], int(e["size"])) for e in raw["files"]}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def local_root(folder: str, data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The local copy of ``folder`` (from ``data_dir`` or ``JUDGELAB_DATA_DIR``), or None to download.

    An explicitly named data folder that does not exist, or lacks ``folder``, is an error rather
    than a silent fallback to the network.
    """
    explicit = data_dir is not None
    base = data_dir if explicit else os.environ.get("JUDGELAB_DATA_DIR") or None
    if base is None:
        return None
    origin = "data_dir" if explicit else "JUDGELAB_DATA_DIR"
    base_path = Path(base).expanduser()
    side_by_side = ", ".join(f"{name}/" for name in SOURCES)
    if not base_path.is_dir():
        raise DataNotFoundError(f"data folder {base_path} (from {origin}) does not exist; it should hold the source "
                                f"folders side by side ({side_by_side})")
    root = base_path / folder
    if not root.is_dir():
        inside = sorted(p.name for p in base_path.iterdir())
        shown = ", ".join(inside[:8]) + (" ..." if len(inside) > 8 else "") if inside else "nothing"
        signature = _SIGNATURE.get(folder)
        hint = f"; {base_path.name} looks like the {folder} folder itself: pass its parent" \
            if base_path.name == folder or (signature and (base_path / signature).exists()) else ""
        raise DataNotFoundError(f"data folder {base_path} (from {origin}) has no {folder}/ subfolder (it holds "
                                f"{shown}); it should hold the source folders side by side ({side_by_side}){hint}")
    return root


def data_location(folder: str, data_dir: str | os.PathLike[str] | None = None) -> str:
    """Where a loader looked for ``folder``: the local copy's path, or the pinned release it downloads from."""
    root = local_root(folder, data_dir)
    if root is not None:
        return str(root)
    source = SOURCES[folder]
    return f"the pinned release {source.repo}@{source.commit[:12]}"


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where downloads go: ``cache_dir``, else ``$JUDGELAB_CACHE``, else ``~/.cache/judgelab/data``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("JUDGELAB_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "judgelab" / "data"


def source_url(source: Source, path: str, base_url: str | None = None) -> str:
    base = (base_url or os.environ.get("JUDGELAB_DATA_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/{source.repo}/{source.commit}/{urllib.parse.quote(source.upstream_path(path))}"


def _download(url: str, target: Path, entry: ManifestEntry, folder: str, timeout: float) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (https/http only)
                    while chunk := response.read(_CHUNK):
                        out.write(chunk)
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                raise DataNotFoundError(
                    f"could not download {folder}/{entry.path} from {url}: {exc}"
                ) from exc
        got = sha256_of(tmp)
        if got != entry.sha256:
            raise ChecksumError(
                f"checksum mismatch for {folder}/{entry.path} downloaded from {url}: "
                f"sha256 {got}, expected {entry.sha256}"
            )
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def fetch_files(
    folder: str,
    paths: Iterable[str],
    *,
    data_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    timeout: float = 60.0,
) -> tuple[dict[str, Path], SourceInfo]:
    """Local paths of ``paths`` (relative to ``folder``), downloading and verifying them if needed."""
    source = SOURCES[folder]
    wanted = list(dict.fromkeys(paths))
    root = local_root(folder, data_dir)
    if root is not None:
        found: dict[str, Path] = {}
        for p in wanted:
            full = root / p
            if not full.is_file():
                raise DataNotFoundError(f"file {p} is missing from the local data folder {root} (the loader's help() "
                                        "shows the layout it expects)")
            found[p] = full
        return found, SourceInfo(source.repo, source.commit, source.license, tuple(wanted), str(root))

    entries = manifest(folder)
    root = cache_root(cache_dir) / folder
    found = {}
    for p in wanted:
        entry = entries.get(p)
        if entry is None:
            raise DataNotFoundError(
                f"{folder}/{p} is not in the pinned release of {source.repo}@{source.commit[:12]}"
            )
        target = root / p
        if not (
            target.is_file() and target.stat().st_size == entry.size and sha256_of(target) == entry.sha256
        ):
            _download(source_url(source, p, base_url), target, entry, folder, timeout)
        found[p] = target
    return found, SourceInfo(source.repo, source.commit, source.license, tuple(wanted), str(root))


def available_paths(folder: str, data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Every file path of ``folder``: from the local copy when there is one, else from the manifest."""
    root = local_root(folder, data_dir)
    if root is None:
        return sorted(manifest(folder))
    return list(_scan(str(root.resolve())))


@cache
def _scan(root: str) -> tuple[str, ...]:
    # A released data folder does not change while a session runs: scan it once.
    # os.walk follows symlinked folders (a local copy assembled from links), which Path.rglob does not
    found = []
    for folder, _, files in os.walk(root, followlinks=True):
        rel = Path(folder).relative_to(root)
        found += [(rel / name).as_posix() for name in files if (Path(folder) / name).is_file()]
    return tuple(sorted(found))


def build_manifest(folder_path: str | os.PathLike[str]) -> dict[str, object]:
    """The manifest (paths, sha256, sizes; no data) of a local copy of a source folder."""
    root = Path(folder_path)
    files = [
        {"path": p.relative_to(root).as_posix(), "sha256": sha256_of(p), "size": p.stat().st_size}
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in NOT_UPSTREAM
    ]
    source = SOURCES[root.name]
    return {"repo": source.repo, "commit": source.commit, "files": files}


if __name__ == "__main__":  # python -m judgelab.datasets.sources <data_dir>: regenerate the manifests
    import sys

    data_root = Path(sys.argv[1])
    for name in SOURCES:
        out = MANIFEST_DIR / f"{name}.json"
        built = build_manifest(data_root / name)
        lines = ",\n".join(json.dumps(f, ensure_ascii=False) for f in built["files"])  # type: ignore[union-attr]
        header = json.dumps({"repo": built["repo"], "commit": built["commit"]})[:-1]
        out.write_text(f'{header}, "files": [\n{lines}\n]}}\n', encoding="utf-8")
        print(f"wrote {out}")
