"""`.gitignore` rules, followed as git follows them (the pathspec library's gitignore
patterns): what a project keeps out of its repository (build output, virtual
environments, generated pages) is kept out of the knowledge base too.

Each folder's `.gitignore` applies to the paths below that folder, relative to it;
the deepest file with a matching pattern decides (so `!keep.md` in a sub-folder
brings back a file that a pattern above left out), and within one file the last
matching pattern, as in git. A folder left out is not entered, so nothing inside it
comes back. When the indexed folder lies inside a git work tree, the `.gitignore`
files from the top of the work tree down to it apply as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pathspec


@dataclass(frozen=True)
class _Rules:
    under: str  # the rules apply to paths (from the indexed folder) that start with this
    seen_as: str  # ...which they see with this in front instead (from their own folder)
    spec: pathspec.GitIgnoreSpec


class GitIgnores:
    """The rules that apply under one indexed folder, read as its folders are entered.

    >>> GitIgnores(Path("/nonexistent")).ignored("notes.md", is_dir=False)
    False
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._rules: list[_Rules] = []  # shallowest first
        for folder in _work_tree_above(root):
            spec = _read(folder)
            if spec is not None:
                self._rules.append(_Rules("", root.relative_to(folder).as_posix() + "/", spec))
        self.enter("")

    def enter(self, folder: str) -> None:
        """Read the `.gitignore` of `folder` (from the indexed folder; "" for itself)."""
        spec = _read(self._root / folder)
        if spec is not None:
            self._rules.append(_Rules(f"{folder}/" if folder else "", "", spec))

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """Whether the file or folder `rel` (from the indexed folder, `/`-separated) is
        left out."""
        for rules in reversed(self._rules):  # the deepest that matches decides
            if not rel.startswith(rules.under):
                continue
            seen = rules.seen_as + rel[len(rules.under) :] + ("/" if is_dir else "")
            include = rules.spec.check_file(seen).include
            if include is not None:
                return bool(include)
        return False


def _read(folder: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def _work_tree_above(root: Path) -> list[Path]:
    """The folders from the top of the git work tree holding `root` down to its parent,
    top first; none when `root` is not inside one, or is its top."""
    if (root / ".git").exists():
        return []
    folders: list[Path] = []
    for folder in root.parents:
        folders.append(folder)
        if (folder / ".git").exists():
            return folders[::-1]
    return []
