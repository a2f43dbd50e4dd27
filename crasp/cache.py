"""What the command line keeps of programs it has checked, as Python keeps bytecode.

``crasp run``, ``check`` and ``fmt`` of a program seen before skip the parser: they read its
plan (:mod:`crasp.plan`), its summary or its formatted text from a per-user folder. An entry is
named by a hash of the program's text, of what it holds (``kind``) and of the tool itself (its
version and the files that decide what a program means), so an edited program or another
version of the tool never reads a stale entry.

The folder is ``$CRASP_CACHE_DIR``, else ``$XDG_CACHE_HOME/crasp``, else ``~/.cache/crasp``.
Entries are written to a unique temporary file and renamed into place, so concurrent writers
never leave a partial entry; an entry is read only when its checksum matches, so a damaged one
is ignored (and replaced). A folder that cannot be written only means nothing is kept. Set
``CRASP_NO_CACHE=1`` or pass ``--no-cache`` to bypass it.

The folder keeps itself under a size limit, ``$CRASP_CACHE_SIZE`` (bytes, or ``512K``, ``256M``,
``1G``; default :data:`DEFAULT_LIMIT`), least recently used entries out: a hit sets its entry's
modification time (access times are often not kept), and a write that takes the folder past the
limit removes the entries unused longest until it is at :data:`TRIM_TO` of the limit. The total
is kept in the folder's ``usage`` file between writes and counted afresh at every trim, so the
folder is scanned only when it has grown by a tenth of the limit. ``crasp cache info`` and
``crasp cache clear`` show and empty it. This module is on the command line's fast path: it
imports no more than ``os``, ``time`` and ``marshal``, and returns plain tuples.

>>> import os, tempfile
>>> os.environ["CRASP_CACHE_DIR"] = tempfile.mkdtemp()
>>> store("plan", 'A = #"a" >= 1', (("a",), (("token", "a"),), (0,)))
>>> load("plan", 'A = #"a" >= 1')
(('a',), (('token', 'a'),), (0,))
>>> load("plan", 'A = #"a" >= 2') is None
True
>>> [(kind, size > 0) for _, kind, size, _ in entries()]
[('plan', True)]
>>> clear()[0], entries()
(1, [])
"""

from __future__ import annotations

import marshal
import os
import time

try:
    from _blake2 import blake2b  # hashlib's blake2b without loading OpenSSL's bindings (a few ms at start-up)
except ImportError:  # pragma: no cover - a Python without the module
    from hashlib import blake2b

from .errors import CraspError
from .version import VERSION

MAGIC = b"crasp-cache\x01"
_DIGEST = 16
_FILES = ("grammar.lark", "parser.py", "lalr.py", "ast.py", "checker.py", "predicates.py", "intsets.py", "limits.py",
          "plan.py", "printer.py", "cache.py", "version.py")
"""The modules that decide what an entry holds: a change to any of them (an edited source tree)
gives every entry a new name."""

LIMIT_VARIABLE = "CRASP_CACHE_SIZE"
"""The environment variable that sets the folder's size limit (:func:`parse_size` reads it)."""
DEFAULT_LIMIT = 256 * 2**20
"""The size limit without :data:`LIMIT_VARIABLE`: 256 MiB."""
TRIM_TO = 0.9
"""A trim leaves the folder at this share of the limit, so that it is not scanned again at once."""
USAGE = "usage"
"""The file in the folder that keeps the entries' total size between trims."""
LARK_TABLES = "grammar.lark-tables"
"""The parser tables Lark keeps in the folder itself (:mod:`crasp.parser`): an entry like the others."""
_HEX = frozenset("0123456789abcdef")
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


class CacheError(CraspError):
    """A cache setting that cannot be read (a malformed :data:`LIMIT_VARIABLE`)."""


def directory() -> str:
    """The cache folder (not created until something is stored)."""
    chosen = os.environ.get("CRASP_CACHE_DIR")
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "crasp")


def disabled() -> bool:
    """Whether ``CRASP_NO_CACHE`` turns the cache off."""
    return os.environ.get("CRASP_NO_CACHE", "") not in ("", "0")


def parse_size(text: str) -> int:
    """Bytes from a size: a whole number of bytes, or a number with a binary unit (K, M, G, T,
    optionally followed by ``iB`` or ``B``); raises ValueError otherwise.

    >>> parse_size("1048576"), parse_size("512K"), parse_size("1.5 GiB"), parse_size("256MB")
    (1048576, 524288, 1610612736, 268435456)
    >>> parse_size("lots")
    Traceback (most recent call last):
    ValueError: 'lots' is not a size: give bytes, or a number with K, M, G or T (e.g. 256M)
    """
    cleaned = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = cleaned[-1:] if cleaned[-1:] in _UNITS else ""
    number = cleaned[: len(cleaned) - len(unit)].strip()
    try:
        value = float(number) if unit else int(number)
    except ValueError:
        value = -1
    if not number or not value >= 0 or value == float("inf"):
        raise ValueError(f"{text!r} is not a size: give bytes, or a number with K, M, G or T (e.g. 256M)")
    return int(value * _UNITS[unit])


def format_size(size: int) -> str:
    """A size in bytes as people read it (binary units).

    >>> format_size(0), format_size(1000), format_size(1536), format_size(DEFAULT_LIMIT)
    ('0 B', '1000 B', '1.5 KiB', '256 MiB')
    """
    for unit in ("T", "G", "M", "K"):
        if size >= _UNITS[unit]:
            return f"{size / _UNITS[unit]:.1f}".removesuffix(".0") + f" {unit}iB"
    return f"{size} B"


def limit() -> int:
    """The folder's size limit in bytes: ``$CRASP_CACHE_SIZE``, else :data:`DEFAULT_LIMIT`.
    Raises :class:`CacheError` for a value :func:`parse_size` cannot read (``crasp cache info``
    reports it; writes fall back to the default)."""
    text = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_LIMIT
    try:
        return parse_size(text)
    except ValueError as error:
        raise CacheError(f"{LIMIT_VARIABLE}: {error}") from None


def _tool() -> bytes:
    here = os.path.dirname(__file__)
    stamps = [VERSION]
    for name in _FILES:
        try:
            status = os.stat(os.path.join(here, name))
            stamps.append(f"{name}:{status.st_mtime_ns}:{status.st_size}")
        except OSError:
            stamps.append(f"{name}:-")
    return "\n".join(stamps).encode()


_TOOL: bytes | None = None


def digest(data: bytes) -> str:
    """A 160-bit hex digest of ``data`` (the hash entries are named by)."""
    return blake2b(data, digest_size=20).hexdigest()


def path(kind: str, text: str) -> str:
    """Where the entry of ``kind`` for program ``text`` lives."""
    global _TOOL
    if _TOOL is None:
        _TOOL = _tool()
    name = blake2b(_TOOL + b"\0" + kind.encode() + b"\0" + text.encode("utf-8", "surrogatepass"),
                   digest_size=20).hexdigest()
    return os.path.join(directory(), name[:2], f"{name[2:]}.{kind}")


def load(kind: str, text: str):
    """The stored value, or None when there is none or it is damaged."""
    if disabled():
        return None
    name = path(kind, text)
    try:
        with open(name, "rb") as file:
            data = file.read()
    except OSError:
        return None
    head, digest, payload = data[: len(MAGIC)], data[len(MAGIC): len(MAGIC) + _DIGEST], data[len(MAGIC) + _DIGEST:]
    if head != MAGIC or blake2b(payload, digest_size=_DIGEST).digest() != digest:
        return None
    try:
        value = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):  # pragma: no cover - a payload whose checksum matched
        return None
    _touch(name)  # used now: the last to be evicted
    return value


def store(kind: str, text: str, value) -> None:
    """Keep ``value`` (built of ints, strings, tuples, lists and dicts) for ``text``; never fails.
    A value larger than the whole limit is not kept; one that takes the folder past it trims it
    (:func:`trim`)."""
    if disabled():
        return
    try:
        bound = limit()
    except CacheError:
        bound = DEFAULT_LIMIT
    target = path(kind, text)
    try:
        payload = marshal.dumps(value)
    except ValueError:  # a value marshal cannot hold
        return
    data = MAGIC + blake2b(payload, digest_size=_DIGEST).digest() + payload
    if len(data) > bound:
        return
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
    except OSError:  # a folder that cannot be written: nothing is kept
        return
    try:
        replaced = os.stat(target).st_size
    except OSError:
        replaced = 0
    if not _write(target, data):
        return
    _touch(target)  # file systems stamp writes with a coarse clock: hits and writes share one here
    _account(len(data) - replaced, bound)


# ---------------------------------------------------------------- size and least recent use


def _touch(name: str) -> None:
    """Mark an entry used now (its modification time, to the nanosecond)."""
    now = time.time_ns()
    try:
        os.utime(name, ns=(now, now))
    except OSError:  # a folder others own, or an entry removed meanwhile
        pass


def _is_entry(folder: str, name: str) -> bool:
    """Whether ``folder/name`` is an entry :func:`store` writes (``ab/<38 hex digits>.<kind>``)."""
    stem, dot, kind = name.partition(".")
    return (len(folder) == 2 and _HEX.issuperset(folder) and len(stem) == 38 and _HEX.issuperset(stem)
            and bool(dot) and kind.isidentifier())


def _is_temporary(folder: str, name: str) -> bool:
    """Whether ``folder/name`` is a writer's temporary file (``<entry>.<pid>.<id>.tmp``)."""
    entry, _, rest = name.partition(".")
    return name.endswith(".tmp") and _is_entry(folder, entry + "." + rest.split(".", 1)[0])


def _files(temporaries: bool = False) -> list[tuple[str, str, int, int]]:
    """(path, kind, bytes, modification time in ns) of every entry in the folder, and with
    ``temporaries`` the temporary files of writers too (kind ``tmp``). Files the cache did not
    write are never listed, so a folder shared with other files is safe to trim and clear."""
    found: list[tuple[str, str, int, int]] = []
    root = directory()
    try:
        top = list(os.scandir(root))
    except OSError:
        return found
    for item in top:
        try:
            if item.name == LARK_TABLES and item.is_file(follow_symlinks=False):
                status = item.stat(follow_symlinks=False)
                found.append((item.path, "lark-tables", status.st_size, status.st_mtime_ns))
                continue
            if not (len(item.name) == 2 and _HEX.issuperset(item.name) and item.is_dir(follow_symlinks=False)):
                continue
            with os.scandir(item.path) as inner:
                for file in inner:
                    if _is_entry(item.name, file.name):
                        kind = file.name.partition(".")[2]
                    elif temporaries and _is_temporary(item.name, file.name):
                        kind = "tmp"
                    else:
                        continue
                    if file.is_file(follow_symlinks=False):
                        status = file.stat(follow_symlinks=False)
                        found.append((file.path, kind, status.st_size, status.st_mtime_ns))
        except OSError:  # removed meanwhile, or unreadable: not ours to count
            continue
    return found


def entries() -> list[tuple[str, str, int, int]]:
    """(path, kind, bytes, modification time in ns) of every entry in the folder, least recently
    used first."""
    return sorted(_files(), key=lambda entry: (entry[3], entry[0]))


def _write(target: str, data: bytes) -> bool:
    """Write ``data`` to ``target`` through a temporary file of this writer's
    (``<target>.<pid>.<id>.tmp``) replaced in one step, so that no reader sees a partial file;
    whether it was written (a read-only or full disk only means it was not)."""
    temporary = f"{target}.{os.getpid()}.{id(data):x}.tmp"
    try:
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, target)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False


def _write_usage(total: int) -> None:
    _write(os.path.join(directory(), USAGE), str(total).encode("ascii"))


def _account(change: int, bound: int) -> None:
    """Add ``change`` bytes to the folder's running total; trim it when that passes ``bound`` (or
    is missing: the first write of a folder counts it). Concurrent writers may lose each other's
    additions; the next trim counts the folder afresh."""
    try:
        with open(os.path.join(directory(), USAGE), "rb") as file:
            total = int(file.read()) + change
    except (OSError, ValueError):
        total = -1
    if total < 0 or total > bound:
        trim(bound)
    else:
        _write_usage(total)


def trim(bound: int | None = None) -> tuple[int, int]:
    """Count the folder afresh and, when its entries pass ``bound`` bytes (default: :func:`limit`),
    remove the least recently used until they are at :data:`TRIM_TO` of it; the number and bytes
    removed. Entries another process removes meanwhile count as removed; any other entry that
    cannot be removed is left."""
    if bound is None:
        bound = limit()
    found = entries()
    total = sum(size for _, _, size, _ in found)
    removed = freed = 0
    if total > bound:
        goal = int(bound * TRIM_TO)
        for name, _, size, _ in found:
            if total <= goal:
                break
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass
            except OSError:
                continue
            total -= size
            removed += 1
            freed += size
    _write_usage(total)
    return removed, freed


def clear() -> tuple[int, int]:
    """Remove every entry (and writers' leftover temporary files) and the folders that held them;
    the number of entries and the bytes removed. Other files in the folder are left alone. An
    entry that cannot be removed raises OSError."""
    removed = freed = 0
    for name, kind, size, _ in _files(temporaries=True):
        try:
            os.unlink(name)
        except FileNotFoundError:
            continue
        removed += kind != "tmp"
        freed += size
    root = directory()
    for folder in _subfolders(root):
        try:
            os.rmdir(folder)
        except OSError:  # not empty: something else lives there
            pass
    try:
        os.unlink(os.path.join(root, USAGE))
    except OSError:
        pass
    return removed, freed


def _subfolders(root: str) -> set[str]:
    try:
        return {item.path for item in os.scandir(root)
                if len(item.name) == 2 and _HEX.issuperset(item.name) and item.is_dir(follow_symlinks=False)}
    except OSError:
        return set()
