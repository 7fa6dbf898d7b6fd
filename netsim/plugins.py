"""User-defined congestion control: plugin files (``--plugin FILE.py``) and entry points.

A plugin file is a Python module that defines one or more subclasses of
`flows.congestion.CongestionControl`, each with its own `name`; `load_plugin` imports it and
registers every such class (`flows.register_algorithm`), after which topologies and
``--algorithm`` can name it and its `PARAMETERS` are validated like a built-in's. Installed
packages register algorithms through the entry-point group ``netsim.algorithms`` (each entry
point names a CongestionControl subclass, or a module whose subclasses are all registered):
`load_entry_points`.

Code runs only from the command line: a file is imported because ``--plugin`` named it (and a
sweep's worker processes import the files the command line gave), or because an installed
package declares an entry point. No input file ever causes an import: a topology names
algorithms, and a sweep file's ``"plugins"`` only names the files it needs, so that the error
can say which ``--plugin`` to add. Every failure is a `PluginError` with one line naming the
file (and the line, for errors raised while importing it); ``sys.exit`` while importing is one
too.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ENTRY_POINT_GROUP = "netsim.algorithms"

# (hashlib, inspect and traceback are imported where they are used: every run imports this
# module to look for entry points, and most load no plugin)
_loaded: dict = {}            # resolved path -> the classes it defines (a file is imported once)
_shown: dict = {}             # resolved path -> the path as the command line gave it
_entry_points_loaded = False


class PluginError(ValueError):
    """A plugin that cannot be used; the message is one line naming the file."""


def _module_name(path: Path) -> str:
    import hashlib
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"netsim_plugin_{stem}_{digest}"


def _where(path: Path, exc: BaseException) -> str:
    """'FILE, line N' of the deepest frame of the traceback inside the plugin file."""
    import traceback
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return f"{path}, line {exc.lineno}"
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            if Path(frame.filename).resolve() == path:
                line = frame.lineno
        except OSError:
            pass
    return f"{path}, line {line}" if line is not None else str(path)


def _register_all(classes: list, origin: str) -> list:
    from flows import ALGORITHMS, register_algorithm
    names = []
    for cls in classes:
        taken = ALGORITHMS.get(cls.__dict__.get("name"))
        source = None if taken is None or taken is cls else _source_file(taken)
        if taken is not None and source in _shown:   # another plugin's: named by its file
            raise PluginError(f'{origin}: class {cls.__name__}: name "{cls.name}" is already '
                              f"taken by class {taken.__qualname__} of {_shown[source]}")
        try:
            register_algorithm(cls)
        except ValueError as exc:
            raise PluginError(f"{origin}: {exc}") from None
        names.append(cls.name)
    return names


def _classes_of(module) -> list:
    import inspect

    from flows.congestion import CongestionControl
    return [obj for _, obj in inspect.getmembers(module, inspect.isclass)
            if issubclass(obj, CongestionControl) and obj is not CongestionControl
            and obj.__module__ == module.__name__]


def load_plugin(path) -> list:
    """Import the plugin file `path` and register its algorithms; returns their names.

    Loading the same file again is a no-op (worker processes may be handed it repeatedly)."""
    given = Path(path)
    resolved = given.resolve()
    if resolved in _loaded:
        return _register_all(_loaded[resolved], f"--plugin {given}")
    if not resolved.is_file():
        from plot_tool.figure_files import file_kind
        what = file_kind(resolved)
        raise PluginError(f"--plugin {given}: " + ("no such file" if what == "missing" else
                                                   f"{what}, not a Python file"))
    if resolved.suffix != ".py":
        raise PluginError(f"--plugin {given}: expected a Python file (.py)")
    name = _module_name(resolved)
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:                  # pragma: no cover
        raise PluginError(f"--plugin {given}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise PluginError(f"--plugin {_where(resolved, exc)}: SyntaxError: {exc.msg}") from None
    except SystemExit as exc:                                # sys.exit() at import
        sys.modules.pop(name, None)
        raise PluginError(f"--plugin {_where(resolved, exc)}: called sys.exit({exc.code!r}) "
                          f"while being imported") from None
    except Exception as exc:                                 # anything the import raised
        sys.modules.pop(name, None)
        message = str(exc).splitlines()[0] if str(exc) else ""
        raise PluginError(f"--plugin {_where(resolved, exc)}: {type(exc).__name__}"
                          f"{': ' + message if message else ''}") from None
    classes = _classes_of(module)
    named = [cls for cls in classes if "name" in cls.__dict__]    # unnamed: helper base classes
    if not classes:
        raise PluginError(f"--plugin {given}: defines no subclass of "
                          f"flows.congestion.CongestionControl")
    names = _register_all(named or classes, f"--plugin {given}")
    _loaded[resolved] = named or classes
    _shown[resolved] = str(given)
    return names


def load_plugins(paths) -> list:
    """`load_plugin` for each path; returns every registered name."""
    names = []
    for path in paths or ():
        names.extend(load_plugin(path))
    return names


def load_entry_points() -> list:
    """Register the algorithms installed packages declare in the `netsim.algorithms` entry-point
    group (once per process); returns their names."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return []
    _entry_points_loaded = True
    if not _may_declare(ENTRY_POINT_GROUP):
        return []
    import inspect
    from importlib.metadata import entry_points
    names = []
    if sys.version_info >= (3, 10):   # noqa: UP036 (the CLI also runs under PyPy 3.9)
        points = entry_points(group=ENTRY_POINT_GROUP)
    else:                            # Python 3.9 (Debian's PyPy): a dict by group
        points = entry_points().get(ENTRY_POINT_GROUP, ())
    for point in points:
        origin = f"entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP})"
        try:
            target = point.load()
        except SystemExit as exc:
            raise PluginError(f"{origin}: called sys.exit({exc.code!r}) while being "
                              f"imported") from None
        except Exception as exc:
            raise PluginError(f"{origin}: {type(exc).__name__}: {exc}") from None
        classes = _classes_of(target) if inspect.ismodule(target) else [target]
        names.extend(_register_all(classes, origin))
        for cls in classes:
            source = _source_file(cls)
            if source is not None:
                _shown.setdefault(source, str(source))
    return names


def _may_declare(group: str) -> bool:
    """False only when no distribution importlib.metadata would find declares entry points of
    `group`; True when one may (then `importlib.metadata` is asked).

    importlib.metadata imports in about 15 ms and scans every installed distribution in about
    20 ms, a tenth of a small run, to find nothing in almost every environment. This reads what
    its path finder reads: the ``entry_points.txt`` of each ``*.dist-info`` and ``*.egg-info``
    directory (and an ``.egg``'s ``EGG-INFO``) of each `sys.path` directory, and says False only
    if none mentions `group`. Whatever it cannot read that way (a zip file on `sys.path`, another
    finder on `sys.meta_path` that provides distributions) counts as "may"."""
    import os
    from importlib.machinery import PathFinder
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and finder is not PathFinder:
            return True
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return True                       # a zip file: its distributions are not read here
        except OSError:
            continue                          # a missing entry holds nothing
        is_egg = os.path.basename(entry).lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (is_egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(root, child, "entry_points.txt"), "rb") as fh:
                    text = fh.read()
            except OSError:
                continue                      # no entry points (or a PKG-INFO file)
            if group.encode() in text:
                return True
    return False


class HookInterrupted(Exception):
    """SIGINT or SIGTERM came while a plugin's code was running (a hook that may never return
    by itself, e.g. a loop): raised there by the command line's handler, so that the run stops
    in that hook with its results so far (stop reason "interrupted", exit status 128 + the
    signal's number) instead of waiting for the hook to end."""

    def __init__(self, signum: int):
        import signal
        super().__init__(f"interrupted ({signal.Signals(signum).name}) while the hook ran")
        self.signum = signum


def plugin_code_running(frame) -> bool:
    """Whether plugin code is on the stack of `frame` (a signal handler's frame argument)."""
    if not _shown:
        return False
    while frame is not None:
        try:
            if Path(frame.f_code.co_filename).resolve() in _shown:
                return True
        except (OSError, ValueError):
            pass
        frame = frame.f_back
    return False


def _source_file(cls):
    import inspect
    try:
        name = inspect.getsourcefile(cls)
        return Path(name).resolve() if name else None
    except (TypeError, OSError):
        return None


def failure_line(exc: BaseException, flows=()) -> str | None:
    """One line for an exception raised while a run went because of plugin code: ``plugin FILE,
    line N, in hook HOOK: Type: message`` (FILE as the command line gave it, N the deepest line
    of the plugin in the traceback, HOOK the plugin's function the transport called). A value
    the transport cannot use (`flows.congestion.AlgorithmValueError`) is its message alone: with
    the line and hook of the plugin code that set it, or of the hook that returned it (the line
    of its ``def``), else (a window the transport found out of bounds later) ``plugin FILE:
    message``. ``sys.exit()`` in a hook is ``called sys.exit(N)``. A built-in algorithm's such
    value (parameters that drive it out of range) is ``flow "ID": message``, the flow found
    among `flows` (the run's Flow objects; the message alone if it is not there). None when no
    plugin code is involved otherwise (a bug of netsim's own: the caller lets it through)."""
    import traceback

    from flows.congestion import AlgorithmValueError
    checked = isinstance(exc, AlgorithmValueError)
    message = str(exc).splitlines()[0] if str(exc) else ""
    if isinstance(exc, SystemExit):
        message = f"called sys.exit({exc.code!r})"
    elif isinstance(exc, HookInterrupted):
        pass
    elif not checked:
        message = f"{type(exc).__name__}{': ' + message if message else ''}"
    frames = []
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            resolved = Path(frame.filename).resolve()
        except (OSError, ValueError):
            continue
        if resolved in _shown:
            frames.append((resolved, frame))
    if frames:
        path, outer = frames[0]                       # the hook the transport called
        deepest = [frame for resolved, frame in frames if resolved == path][-1]
        return f"plugin {_shown[path]}, line {deepest.lineno}, in hook {outer.name}: {message}"
    if not isinstance(exc, AlgorithmValueError):
        return None
    hook = exc.hook
    code = getattr(getattr(hook, "__func__", hook), "__code__", None)
    if code is not None:
        try:
            source = Path(code.co_filename).resolve()
        except (OSError, ValueError):
            source = None
        if source in _shown:
            return f"plugin {_shown[source]}, line {code.co_firstlineno}, in hook {code.co_name}: {message}"
    source = _source_file(exc.algorithm)
    if source in _shown:
        return f"plugin {_shown[source]}: {message}"
    from topologies.validation import quote
    for flow in flows:
        if exc.sender is not None and getattr(flow, "sender", None) is exc.sender:
            return f"flow {quote(flow.id)}: {message}"
    return message


def plugin_paths(paths) -> tuple:
    """The absolute paths of `paths` (what is handed to worker processes)."""
    return tuple(str(Path(p).resolve()) for p in paths or ())
