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

>>> import os, tempfile
>>> os.environ["CRASP_CACHE_DIR"] = tempfile.mkdtemp()
>>> store("plan", 'A = #"a" >= 1', (("a",), (("token", "a"),), (0,)))
>>> load("plan", 'A = #"a" >= 1')
(('a',), (('token', 'a'),), (0,))
>>> load("plan", 'A = #"a" >= 2') is None
True
"""

from __future__ import annotations

import marshal
import os

try:
    from _blake2 import blake2b  # hashlib's blake2b without loading OpenSSL's bindings (a few ms at start-up)
except ImportError:  # pragma: no cover - a Python without the module
    from hashlib import blake2b

from .version import VERSION

MAGIC = b"crasp-cache\x01"
_DIGEST = 16
_FILES = ("grammar.lark", "parser.py", "lalr.py", "ast.py", "checker.py", "predicates.py", "intsets.py", "limits.py",
          "plan.py", "printer.py", "cache.py", "version.py")
"""The modules that decide what an entry holds: a change to any of them (an edited source tree)
gives every entry a new name."""


def directory() -> str:
    """The cache folder (not created until something is stored)."""
    chosen = os.environ.get("CRASP_CACHE_DIR")
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "crasp")


def disabled() -> bool:
    return os.environ.get("CRASP_NO_CACHE", "") not in ("", "0")


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
    try:
        with open(path(kind, text), "rb") as file:
            data = file.read()
    except OSError:
        return None
    head, digest, payload = data[: len(MAGIC)], data[len(MAGIC): len(MAGIC) + _DIGEST], data[len(MAGIC) + _DIGEST:]
    if head != MAGIC or blake2b(payload, digest_size=_DIGEST).digest() != digest:
        return None
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError):  # pragma: no cover - a payload whose checksum matched
        return None


def store(kind: str, text: str, value) -> None:
    """Keep ``value`` (built of ints, strings, tuples, lists and dicts) for ``text``; never fails."""
    if disabled():
        return
    target = path(kind, text)
    temporary = f"{target}.{os.getpid()}.{id(value):x}.tmp"
    try:
        payload = marshal.dumps(value)
        data = MAGIC + blake2b(payload, digest_size=_DIGEST).digest() + payload
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, target)
    except (OSError, ValueError):  # a read-only or full disk, or a value marshal cannot hold
        try:
            os.unlink(temporary)
        except OSError:
            pass
