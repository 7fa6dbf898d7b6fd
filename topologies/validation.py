"""Validation toolkit shared by every JSON input (topology files, sweep files, ...).

Inputs are untrusted data. This module reads them safely and gives every problem as one line:

* `read_json(path, error=..., kind=...)` reads a JSON file within the `Input limits` below and
  checks it is plain JSON data (`check_plain`): no jsonpickle ``py/...`` tags, no duplicate keys,
  no NaN/Infinity, nothing nested, long or large beyond the limits. `parse_json` does the same for
  text already in memory. Valid data takes a faster road to the same result (`_plain_data`:
  json's own number parsing and one pass that only says yes or no); anything it refuses goes the
  road that names the problem.
* `closest` / `suggestion`: the one "did you mean" helper (``(did you mean "X"?)``).
* `quote`, `show`, `one_line`: how input values appear in messages, escaped so that no newline or
  control character of the input ever reaches a message.
* `file_name_problem`, `id_problem`, `count_problem`, `is_number`: checks of single values that
  return None when the value is fine, else the text "expected ..., got ..." for the caller's own
  message (the caller knows the file, the entry and the field).

Errors are raised as `InputError` or as the subclass the caller passes as ``error`` (the
topology loader's `TopologyError`, the sweep loader's `SweepError`). Every limit is one named
constant here, documented in docs/topology-format.md and docs/sweeps.md ("Input limits").
"""
from __future__ import annotations

import json
import math
import os
import re
import stat
import unicodedata
from pathlib import Path

__all__ = [
    "FORMULA_STARTS", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_ID_CHARS", "MAX_INT_DIGITS", "MAX_ITEMS",
    "MAX_NAME_BYTES", "MAX_RANGE_NUM", "MAX_SEEDS", "MAX_STRING_CHARS", "MAX_SWEEP_RUNS",
    "SUGGESTION_CUTOFF", "InputError", "check_plain", "closest", "count_problem",
    "file_name_problem", "id_problem", "is_number", "one_line", "parse_json", "path_text", "quote",
    "read_json", "show", "suggestion",
]

# -- input limits (docs/topology-format.md and docs/sweeps.md, "Input limits") ------------------

MAX_FILE_BYTES = 32 * 2**20   # size of a JSON file, checked before it is read
MAX_DEPTH = 64                # nested lists/objects; the document itself is level 1
MAX_INT_DIGITS = 20           # digits of a JSON integer (a 64-bit value has at most 20)
MAX_ITEMS = 1_000_000         # entries of one list, fields of one object
MAX_STRING_CHARS = 100_000    # characters of one string (keys included)
MAX_NAME_BYTES = 128          # UTF-8 bytes of a name that becomes a file or directory name
MAX_ID_CHARS = 255            # characters of a node, link or flow id
MAX_SEEDS = 10_000            # sweep "seeds": the count, or the length of the list
MAX_RANGE_NUM = 100_000       # sweep range "num"
MAX_SWEEP_RUNS = 100_000      # points x seeds of one sweep

SUGGESTION_CUTOFF = 0.5       # difflib similarity; 0.5 lets "T9" suggest "T1"

# Characters never allowed in ids and names: control (Cc), format (Cf, e.g. a right-to-left
# override), surrogates (Cs: cannot be written as UTF-8) and line/paragraph separators (Zl, Zp).
_FORBIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))


class InputError(ValueError):
    """An input is unreadable or invalid: one line, whatever the input holds.

    The message is made single-line on construction: any newline, control or other non-printable
    character is written as an escape (``\\n``, ``\\x1b``, ``\\u2028``).
    """

    def __init__(self, message: str = "", *args):
        super().__init__(one_line(str(message)), *args)


# -- messages ------------------------------------------------------------------------------------

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    if char in _ESCAPES:
        return _ESCAPES[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def one_line(text: str) -> str:
    """`text` with every non-printable character (newlines, controls, separators, surrogates)
    escaped, so that it prints as exactly one line."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def quote(text: str) -> str:
    """`text` in double quotes, JSON-escaped, safe to print on one line."""
    if type(text) is str and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'                    # nothing to escape (the common case: an id)
    return one_line(json.dumps(text, ensure_ascii=False))


def show(value) -> str:
    """How a found value appears in a message (JSON spelling, short, one line)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return repr(value) if value.bit_length() <= 128 else "a very large integer"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return quote(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"


def closest(name, known) -> str | None:
    """The name in `known` most similar to `name` (difflib ratio >= SUGGESTION_CUTOFF; ties: the
    first in `known`'s order), or None. Non-string names have no suggestion."""
    import difflib  # (only a message with a suggestion needs it: not at every start-up)

    if not isinstance(name, str):
        return None
    best, best_ratio = None, SUGGESTION_CUTOFF
    matcher = difflib.SequenceMatcher(b=name)
    for candidate in known:
        matcher.set_seq1(str(candidate))
        ratio = matcher.ratio()
        if ratio > best_ratio or (best is None and ratio >= best_ratio):
            best, best_ratio = str(candidate), ratio
    return best


def suggestion(name, known) -> str:
    """' (did you mean "X"?)' for the closest name in `known`, or ''."""
    close = closest(name, known)
    return f" (did you mean {quote(close)}?)" if close is not None else ""


MAX_KNOWN_SHOWN = 200   # characters of the known ids a message lists (then "and N more")


def known_list(known) -> str:
    """`known` (ids) for one line: "a, b, c" while that fits MAX_KNOWN_SHOWN characters, else
    as many as fit and "and N more" (a network of 10 000 links is not listed whole)."""
    names = [str(name) for name in known]
    shown: list[str] = []
    size = 0
    for name in names:
        size += len(name) + 2
        if size > MAX_KNOWN_SHOWN and shown:
            break
        shown.append(name if len(name) <= 40 else name[:37] + "...")
    rest = len(names) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def unknown_id(kind: str, wanted, known) -> str | None:
    """The message naming the first of `wanted` that is not among `known` ids (with a
    did-you-mean and the known ids, as many as fit `known_list`), or None if all are known: the
    one wording of a selection by id (-l/-F of a run and of a report, `make_report`'s links=
    and flows=)."""
    for item in wanted:
        if item not in known:
            return f"{kind}: unknown id {quote(item)}{suggestion(item, known)}; " \
                   f"known: {known_list(known)}"
    return None


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MAX_PATH_SHOWN = 160


def path_text(path) -> str:
    """A linked JSON path ((parent, key) pairs; None is the document) as ``links[0].ends``."""
    parts = []
    while path is not None:
        path, key = path
        parts.append(key)
    text = ""
    for part in reversed(parts):
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{quote(part)}]"
    if len(text) > _MAX_PATH_SHOWN:
        text = text[:_MAX_PATH_SHOWN - 3] + "..."
    return text or "top level"


# -- checks of single values ---------------------------------------------------------------------

def _forbidden_char(text: str) -> str | None:
    """The first character of `text` that no id or name may hold, or None."""
    if text.isprintable():   # fast path: printable text holds none of them
        return None
    for char in text:
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            return char
    return None


def _char_name(char: str) -> str:
    return f"U+{ord(char):04X}"


def file_name_problem(value) -> str | None:
    """None if `value` is a plain file name, safe to join to a directory; else what is wrong, as
    'expected a plain file name ..., got ...'.

    A plain file name is a string of 1 to MAX_NAME_BYTES bytes in UTF-8, without path separators
    ("/" or "\\"), without ":" (a drive on Windows), not "." or "..", not starting with "." (hidden
    names are those of staging directories and partial files, ``.NAME.partial-PID-...``), and
    without control, format, surrogate or line-separator characters.
    """
    expected = "expected a plain file name"
    if not isinstance(value, str):
        return f"{expected} (a string), got {show(value)}"
    if not value:
        return f'{expected}, got ""'
    bad = _forbidden_char(value)
    if bad is not None:
        return f"{expected} (no control characters), got {show(value)} ({_char_name(bad)})"
    for separator in ("/", "\\", ":"):
        if separator in value:
            return f"{expected} (no {quote(separator)}), got {show(value)}"
    if value in (".", ".."):
        return f'{expected} (not "." or ".."), got {show(value)}'
    if value.startswith("."):       # hidden names are the staging directories' and files'
        return f'{expected} (not starting with "."), got {show(value)}'
    size = len(value.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        return f"{expected} of at most {MAX_NAME_BYTES} bytes, got {show(value)} ({size} bytes)"
    return None


# First characters that make a spreadsheet read a CSV cell as a formula (OWASP, "CSV Injection"):
# ids reach the CSV files as they are, so none may start with one (tab and carriage return are
# control characters, refused anyway).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_START_SET = frozenset(FORMULA_STARTS)     # (a set: looked up per id, the tuple is scanned)


def id_problem(value) -> str | None:
    """None if `value` is a valid id: a non-empty string of at most MAX_ID_CHARS characters, none
    of them a control, format, surrogate or line-separator character, not starting with a
    character of FORMULA_STARTS; else what is wrong."""
    if not isinstance(value, str) or not value:
        return f"expected a non-empty string, got {show(value)}"
    if value[0] in _FORMULA_START_SET:
        return (f"expected an id not starting with {quote(value[0])} (a spreadsheet opening the "
                f"CSV files would run it as a formula), got {show(value)}")
    bad = _forbidden_char(value)
    if bad is not None:
        return f"expected an id without control characters, got {show(value)} ({_char_name(bad)})"
    if len(value) > MAX_ID_CHARS:
        return f"expected an id of at most {MAX_ID_CHARS} characters, got {len(value)} characters"
    return None


def is_number(value) -> bool:
    """A finite JSON number (int or float, not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:   # an int too large for a float
        return False


def count_problem(value, minimum: int, maximum: int, what: str = "an integer") -> str | None:
    """None if `value` is an integer (not a boolean, not a float) in [minimum, maximum]; else
    'expected <what> from <minimum> to <maximum>, got <value>'."""
    if isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= maximum:
        return None
    return f"expected {what} from {minimum} to {maximum}, got {show(value)}"


# -- parsing -------------------------------------------------------------------------------------

class _JsonObject(dict):
    """A parsed JSON object that remembers keys it saw more than once."""

    __slots__ = ("duplicates",)
    duplicates: tuple      # the keys seen again, in order (empty when none)


class _Rejected(ValueError):
    """A literal refused while parsing; `token` helps locate it."""

    def __init__(self, message: str, token: str | None = None):
        super().__init__(message)
        self.token = token


def _object_pairs(pairs) -> _JsonObject:
    obj = _JsonObject(pairs)
    obj.duplicates = ()     # (an unset slot would cost `check_plain` an exception per object)
    if len(obj) != len(pairs):
        seen: set = set()
        again = []
        for key, _ in pairs:
            if key in seen:
                again.append(key)
            seen.add(key)
        obj.duplicates = tuple(again)
    return obj


def _reject_constant(literal: str):
    raise _Rejected(f"{literal} is not allowed; numbers must be finite")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Rejected(f"number {text if len(text) <= 40 else text[:37] + '...'} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise _Rejected("integer too long", token=text)
    return int(text)


def _line_column(text, offset: int) -> str:
    """'line L, column C' of `offset` in `text` (str or bytes)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    line = text.count(newline, 0, offset) + 1
    column = offset - (text.rfind(newline, 0, offset) + 1) + 1
    return f"line {line}, column {column}"


_NUMBER_BEFORE = frozenset("[,:")


def _token_position(text: str, token: str) -> str:
    """' at line L, column C' of the number `token` in `text`, or '' if it cannot be found."""
    start = text.find(token)
    while start >= 0:
        end = start + len(token)
        before = text[:start].rstrip()[-1:]
        after = text[end:end + 1]
        if (not before or before in _NUMBER_BEFORE) and not (after.isdigit() or after in ".eE"):
            return " at " + _line_column(text, start)
        start = text.find(token, start + 1)
    return ""


# (no possessive quantifier: the alternatives never overlap, so matching is linear; and the
# topology format must stay readable by PyPy 3.9, whose re has no "*+")
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', re.DOTALL)


def _too_deep_position(text: str) -> str:
    """' at line L, column C' of the bracket opening level MAX_DEPTH + 1, or ''."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return " at " + _line_column(text, match.start())
        elif token in "]}":
            depth -= 1
    return ""


def parse_json(label: str, text: str, *, error: type[InputError] = InputError):
    """Parse JSON `text` (the content of `label`): duplicate keys recorded for `check_plain`,
    NaN/Infinity, out-of-range numbers, integers over MAX_INT_DIGITS digits and nesting the
    parser cannot follow rejected with one line. Call `check_plain` on the result."""
    try:
        return json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_reject_constant,
                          parse_float=_finite_float, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        message = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg   # ("...starting at")
        raise error(f"{label}: not valid JSON: {message} at line {exc.lineno}, "
                    f"column {exc.colno}{_json_hint(text, exc.pos)}") from None
    except RecursionError:
        raise error(f"{label}: nested deeper than {MAX_DEPTH} levels"
                    f"{_too_deep_position(text)}") from None
    except _Rejected as exc:
        if exc.token is None:
            raise error(f"{label}: not valid JSON: {exc}") from None
        digits = len(exc.token) - exc.token.startswith("-")
        raise error(f"{label}: integer with {digits} digits{_token_position(text, exc.token)}; "
                    f"at most {MAX_INT_DIGITS} digits are allowed") from None
    except ValueError as exc:   # anything else the parser refuses
        raise error(f"{label}: not valid JSON: {exc}") from None


def _json_hint(text: str, pos: int) -> str:
    """What a hand-written file's JSON error most likely is, where the parser stopped: a comment
    or a trailing comma (JSON has neither), as "; ..." or ""."""
    rest = text[pos:pos + 2]
    if rest.startswith(("//", "/*", "#")):
        return "; JSON has no comments"
    before = text[:pos].rstrip()
    if before.endswith(",") and rest[:1] in ("]", "}"):
        return "; a trailing comma (JSON allows none before ] or })"
    return ""


def _regular_file_size(label: str, path: Path, error) -> int:
    try:
        info = os.stat(path)
    except (OSError, ValueError) as exc:   # ValueError: a NUL in the path
        raise error(f"{label}: cannot read file: {getattr(exc, 'strerror', None) or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{label}: cannot read file: it is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{label}: cannot read file: not a regular file")
    return info.st_size


def _too_large(label: str, size: int) -> str:
    mib = f" ({MAX_FILE_BYTES // 2**20} MiB)" if MAX_FILE_BYTES % 2**20 == 0 else ""
    return f"{label}: file too large: {size} bytes; at most {MAX_FILE_BYTES} bytes{mib} are read"


def read_json(path, *, error: type[InputError] = InputError, kind: str = "JSON files"):
    """Read and check the JSON file `path`; returns (label, data).

    `label` is the path as given (escaped for messages). Checked in this order, each problem one
    line raised as `error`: the file is a readable regular file of at most MAX_FILE_BYTES bytes
    (checked before reading it), UTF-8 text (a BOM is allowed), JSON (`parse_json`), and plain
    data within the limits (`check_plain`; `kind`, e.g. "topology files", names what must be plain
    data in the jsonpickle message).
    """
    path = Path(path)
    label = one_line(str(path))
    size = _regular_file_size(label, path, error)
    if size > MAX_FILE_BYTES:
        raise error(_too_large(label, size))
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise error(f"{label}: cannot read file: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:   # it grew since stat
        raise error(_too_large(label, len(raw)))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{label}: not valid UTF-8: byte 0x{raw[exc.start]:02x} at "
                    f"{_line_column(raw, exc.start)} (byte offset {exc.start})") from None
    del raw
    data = _plain_data(text)
    if data is None:              # something to report: the checks that say what and where
        data = parse_json(label, text, error=error)
        check_plain(label, data, error=error, kind=kind)
    return label, data


class _NotPlain(ValueError):
    """`_plain_data` stops: the input holds something to report."""


def _unique_pairs(pairs) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _NotPlain
    return obj


def _plain_data(text: str):
    """`text` parsed, if `parse_json` and `check_plain` would find nothing to report in it: then
    the same data (the same values: json parses numbers as `parse_json`'s hooks do, with the
    same functions; plain dicts, as no key is repeated), else None. Whatever those two reject
    ends here as an exception (a repeated key, an integer json cannot convert, nesting it cannot
    follow, invalid JSON) or as a refusal of `_within_limits` (NaN and Infinity, which json
    reads as floats, and the limits)."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_pairs)
    except (ValueError, RecursionError):        # (json's errors are ValueErrors, and _NotPlain)
        return None
    return data if _within_limits(data) else None


# -- plain-data check ----------------------------------------------------------------------------

def _scalar_problem(value) -> str | None:
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            return f"string of {len(value)} characters; at most {MAX_STRING_CHARS} are allowed"
        return None
    if value is None or isinstance(value, (bool, float)):
        return None
    if isinstance(value, int):
        digits = len(str(abs(value))) if value.bit_length() <= 4 * MAX_INT_DIGITS else None
        if digits is None or digits > MAX_INT_DIGITS:
            return f"integer with more than {MAX_INT_DIGITS} digits"
        return None
    return f"expected plain JSON data, got {show(value)}"


def check_plain(label: str, data, *, error: type[InputError] = InputError,
                kind: str = "JSON files") -> None:
    """Reject anything that is not plain JSON data within the limits, one line naming the JSON
    path: jsonpickle ``py/...`` keys, duplicate keys (as recorded by `parse_json`), non-string
    keys, values of other types, nesting over MAX_DEPTH, lists or objects over MAX_ITEMS entries,
    strings over MAX_STRING_CHARS characters, integers over MAX_INT_DIGITS digits.

    Iterative (no recursion), in document order. Works on parsed files and on dicts built in
    Python (lists, tuples, dicts with string keys, str, int, float, bool, None).
    """
    if _within_limits(data):      # nothing to report (one cheaper pass)
        return
    plain_keys: set = set()   # field names already found plain (they repeat: checked once each)
    stack = [(data, None, 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict):
            if depth > MAX_DEPTH or len(value) > MAX_ITEMS:
                _check_size(label, value, path, depth, error, "object", "fields")
            if not plain_keys.issuperset(value):
                _check_keys(label, value, path, error, kind)
                plain_keys.update(value)
            duplicates = getattr(value, "duplicates", ())
            if duplicates:
                raise error(f"{label}: {path_text(path)}: duplicate field {quote(duplicates[0])}")
            children = _to_visit(value.items(), path, depth)
        elif isinstance(value, (list, tuple)):
            if depth > MAX_DEPTH or len(value) > MAX_ITEMS:
                _check_size(label, value, path, depth, error, "list", "entries")
            children = _to_visit(enumerate(value), path, depth)
        else:
            problem = _scalar_problem(value)
            if problem:
                raise error(f"{label}: {path_text(path)}: {problem}")
            continue
        stack.extend(reversed(children))


_PLAIN_SCALARS = frozenset((float, bool, type(None)))
_INT_LIMIT = 10 ** MAX_INT_DIGITS     # an int below it in magnitude has at most MAX_INT_DIGITS digits
_INT_LOW = -_INT_LIMIT                 # (negated once, not for each int checked)


def _to_visit(entries, path, depth: int) -> list:
    """(value, path, depth) of the `entries` ((key or index, value) pairs of one container) that
    `check_plain` must look at: containers, and scalars with a problem. The common scalars
    (float, bool, null, short str, int within the limit) are passed here without a call."""
    out = []
    for key, item in entries:
        kind = type(item)
        if kind in _PLAIN_SCALARS:
            continue
        if kind is str:
            if len(item) <= MAX_STRING_CHARS:
                continue
        elif kind is int:
            if _INT_LOW < item < _INT_LIMIT:
                continue
        elif not isinstance(item, (dict, list, tuple)) and not _scalar_problem(item):
            continue
        out.append((item, (path, key), depth + 1))
    return out


def _within_limits(data) -> bool:
    """True only if `check_plain` finds nothing in `data` (and its floats are finite, as
    `parse_json` requires): the same checks without paths, level by level. Anything but plain
    dicts, lists and the JSON scalars (a tuple, a parsed object that saw a key twice) is left
    to `check_plain` (False)."""
    known_keys: set = set()
    level: list = [[data]]        # the document, in a list of its own
    depth = 0
    while level:
        if depth > MAX_DEPTH:
            return False
        below = []
        for container in level:
            if len(container) > MAX_ITEMS:
                return False
            if type(container) is dict:
                if not known_keys.issuperset(container):
                    for key in container:
                        if type(key) is not str or key.startswith("py/") \
                                or len(key) > MAX_STRING_CHARS:
                            return False
                    known_keys.update(container)
                container = container.values()
            for item in container:
                kind = type(item)
                if kind is str:
                    if len(item) > MAX_STRING_CHARS:
                        return False
                elif kind is int:
                    if not _INT_LOW < item < _INT_LIMIT:
                        return False
                elif kind is float:
                    if item - item != 0.0:          # NaN or infinite
                        return False
                elif kind is dict or kind is list:
                    below.append(item)
                elif item is not None and kind is not bool:
                    return False
        level = below
        depth += 1
    return True


def _check_size(label, value, path, depth, error, what, entries) -> None:
    if depth > MAX_DEPTH:
        raise error(f"{label}: {path_text(path)}: nested deeper than {MAX_DEPTH} levels")
    if len(value) > MAX_ITEMS:
        raise error(f"{label}: {path_text(path)}: {what} of {len(value)} {entries}; "
                    f"at most {MAX_ITEMS} are allowed")


def _check_keys(label: str, obj: dict, path, error, kind: str) -> None:
    for key in obj:
        if not isinstance(key, str):
            raise error(f"{label}: {path_text(path)}: field names must be strings, got {show(key)}")
        if key.startswith("py/"):
            legacy = (not path and key == "py/object" and isinstance(obj[key], str)
                      and obj[key].endswith("NetworkTopology"))    # a 2015 course file
            raise error(f"{label}: {path_text(path)}: jsonpickle tag {quote(key)} is not allowed; "
                        f"{kind} are plain JSON data"
                        + (f" (a 2015 topology: convert it with python initializer.py convert "
                           f"{label} -o NEW.json)" if legacy else ""))
        if len(key) > MAX_STRING_CHARS:
            raise error(f"{label}: {path_text(path)}: field name of {len(key)} characters; at most "
                        f"{MAX_STRING_CHARS} are allowed")
