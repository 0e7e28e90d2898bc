"""Which files an import reads below the paths it is given (domain: the file system only).

:func:`iter_import_files` walks the given files and directories: directories recursively, in
name order, for files ending ``.json`` or ``.jsonl`` (any case) and the files an agent names
as its own (its SQLite database, a Markdown history: ``AgentDefinition.file_names``); the
files an agent reads with a session's main file or keeps as settings are left out
(``AgentDefinition.aside``). Below a given root a dot-directory is entered only when it is an
agent's home, and then only its session folders; tools' and packages' folders
(``NOISE_FOLDERS``) never. Links leading out of the root and non-regular files are reported
as :class:`FailedFile` (see :mod:`store.importers.walk`, which imports what this lists).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from store.agents.registry import aside_files, aside_folders, named_file_agents
from store.capture.agents import NOISE_FOLDERS, agent_homes, home_session_folders

__all__ = ["FailedFile", "iter_import_files"]

_SUFFIXES = (".json", ".jsonl")


@dataclass(frozen=True, slots=True)
class FailedFile:
    """A file that was not imported at all, and why."""

    path: Path
    error: str

    def __str__(self) -> str:
        return f"{self.path}: {self.error}"


# -- walking -------------------------------------------------------------------------------------


def iter_import_files(paths: Iterable[Path | str]) -> Iterator[Path | FailedFile]:
    """The files to import under ``paths`` (see the module docstring), each once, or a
    :class:`FailedFile` for what is refused."""
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        try:
            root = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            yield FailedFile(path, f"cannot open: {getattr(exc, 'strerror', None) or exc}")
            continue
        if root.is_dir():
            yield from _walk(root, seen)
        elif root not in seen:
            seen.add(root)
            yield _regular(root)


def _regular(path: Path) -> Path | FailedFile:
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return FailedFile(path, f"cannot open: {exc.strerror or exc}")
    if not stat.S_ISREG(mode):
        return FailedFile(path, "not a regular file: not read")
    return path


def _plain(path: Path) -> Path | FailedFile | None:
    """A file in a real folder that is not a link, as :func:`_regular` gives it (one
    ``lstat``); ``None`` for a link (the caller resolves it)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return FailedFile(path, f"cannot open: {exc.strerror or exc}")
    if stat.S_ISLNK(mode):
        return None
    if not stat.S_ISREG(mode):
        return FailedFile(path, "not a regular file: not read")
    return path


def _resolve(path: Path) -> Path | FailedFile:
    """Where ``path`` leads, or a :class:`FailedFile` when it cannot be resolved (a symbolic
    link loop, ``a -> b -> a``: Python 3.11 raises ``RuntimeError``, later ones ``OSError``)."""
    try:
        return path.resolve()
    except RuntimeError:
        return FailedFile(path, "symbolic link loop: not followed")
    except OSError as exc:
        return FailedFile(path, f"cannot resolve: {exc.strerror or exc}")


def _walk(root: Path, seen: set[Path], top: Path | None = None) -> Iterator[Path | FailedFile]:
    """The files below ``top`` (default: ``root``); links must stay inside ``root``."""
    failures: list[FailedFile] = []
    homes = agent_homes()

    def report(exc: OSError) -> None:
        failures.append(FailedFile(Path(exc.filename or root), f"cannot list: {exc.strerror}"))

    for folder, dirs, files in os.walk(top or root, onerror=report):
        base = Path(folder)
        kept = []
        agents: list[Path] = []
        snapshots = aside_folders(dirs, files)  # (a Copilot CLI session's checkpoints)
        for name in sorted(dirs):
            child = base / name
            if name in snapshots:
                continue
            if name in NOISE_FOLDERS and name not in homes:
                continue
            if child.is_symlink():
                target = _resolve(child)
                if isinstance(target, FailedFile):
                    yield target
                    continue
                if not target.is_relative_to(root):
                    yield FailedFile(child, f"symbolic link to {target}, outside {root}: "
                                            "not followed")
                continue  # a link inside the root: its target is walked on its own
            if name.startswith("."):
                # an agent's home (.claude, .codex ...): only its session folders
                agents += [found for _, found in home_session_folders(child)]
                continue
            kept.append(name)
        if base.name == "storage" and {"session", "message", "part"} <= set(kept):
            kept = ["session"]  # OpenCode's JSON storage: a session file reads the rest
        dirs[:] = kept
        # Files read with their session's main file, and an agent's own settings beside its
        # database (OpenCode's auth.json holds credentials): each agent's ``aside``.
        aside = aside_files(folder, files)
        # A folder that is its own real path (no link on the way: os.walk enters none below
        # the resolved root, but an agent's session folder may be one): a file in it that is
        # no link is its own real path too, told by one lstat instead of a resolve (an
        # lstat per component) and a stat: 44k files' idle pass of `watch` 2.5 -> ~1 s.
        real = os.path.realpath(folder) == folder
        for name in sorted(files):
            if name in aside or not (name.lower().endswith(_SUFFIXES)
                                     or named_file_agents(name)):
                continue
            child = base / name
            if real:
                plain = _plain(child)
                if plain is not None:
                    if child not in seen:
                        seen.add(child)
                        yield plain
                    continue
            target = _resolve(child)
            if isinstance(target, FailedFile):
                yield target
                continue
            if child.is_symlink() and not target.is_relative_to(root):
                yield FailedFile(child, f"symbolic link to {target}, outside {root}: "
                                        "not followed")
                continue
            if target in seen:
                continue
            seen.add(target)
            yield _regular(target)
        yield from failures
        failures.clear()
        for found in agents:
            target = _resolve(found)
            if isinstance(target, FailedFile):
                yield target
            elif not target.is_relative_to(root):
                yield FailedFile(found, f"symbolic link to {target}, outside {root}: "
                                        "not followed")
            elif target.is_file():  # an agent's database (a home's entry may name one)
                if target not in seen:
                    seen.add(target)
                    yield _regular(target)
            else:
                yield from _walk(root, seen, target)
    yield from failures  # the root itself could not be listed
