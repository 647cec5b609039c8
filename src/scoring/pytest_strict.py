"""benchgym's strict pytest launcher (src/scoring/strict.ts): `python -c <this> CONTROL <pytest args>`.

Before any code of the workspace can run: pytest, its default plugins and the plugins the
env installed (pytest11 entry points of distributions outside the workspace) are imported
with the workspace off sys.path; plugin autoloading is turned off, so a `*.dist-info` in the
workspace names no plugin; bytecode is neither written nor (the scorer removed it) read; the
identity of pytest's and pluggy's internals is recorded. CONTROL (a JSON file: nonce, output
path) is read and deleted at once. After pytest.main returns, the record is written: the
nonce, pytest's exit code, the JUnit report's sha256, each report as it happened, the ids
collected, and what changed in pytest's internals or which workspace plugin hooked the run.
Python 3.6 compatible (the oldest envs a suite pins).
"""
import hashlib, importlib, json, os, sys, types

_real_exit = sys.exit
cwd = os.path.realpath(os.getcwd())
sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd(), cwd)]
with open(sys.argv[1]) as _f:
    _control = json.load(_f)
os.unlink(sys.argv[1])
_nonce, _out = _control["nonce"], _control["out"]
del _control
os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
sys.dont_write_bytecode = True

import pytest, _pytest.config

for _name in _pytest.config.default_plugins:
    try:
        importlib.import_module("_pytest." + _name)
    except Exception:
        pass


def _inside(p):
    try:
        p = os.path.realpath(str(p))
    except Exception:
        return False
    return p == cwd or p.startswith(cwd + os.sep)


_notes = []
try:
    from importlib import metadata as _metadata
except ImportError:
    try:
        import importlib_metadata as _metadata
    except ImportError:
        _metadata = None

_env_plugins = []
if _metadata is not None:
    _seen = set()
    for _dist in _metadata.distributions():
        _where = getattr(_dist, "_path", None)
        if _where is not None and _inside(_where):
            continue
        for _ep in getattr(_dist, "entry_points", ()):
            if getattr(_ep, "group", None) != "pytest11" or _ep.name in _seen:
                continue
            _seen.add(_ep.name)
            try:
                _env_plugins.append(_ep.load())
            except Exception as e:
                _notes.append("the env's pytest plugin %s did not load: %s" % (_ep.name, e))

_WATCHED = [
    "_pytest.runner", "_pytest.reports", "_pytest.python", "_pytest.main", "_pytest.junitxml",
    "_pytest.outcomes", "_pytest.skipping", "_pytest.terminal",
    "pluggy", "pluggy._hooks", "pluggy._callers", "pluggy._manager", "pluggy._result",
    "pluggy.hooks", "pluggy.callers", "pluggy.manager",
]
_KINDS = (types.FunctionType, types.BuiltinFunctionType, classmethod, staticmethod, property, type)


def _snapshot():
    """(module, attribute path, object) of every function, class and method of the watched modules."""
    snap = []
    for m in _WATCHED:
        mod = sys.modules.get(m)
        if mod is None:
            continue
        snap.append((m, (), mod))
        for k, v in list(vars(mod).items()):
            if not isinstance(v, _KINDS):
                continue
            snap.append((m, (k,), v))
            if isinstance(v, type) and getattr(v, "__module__", None) == m:
                for ak, av in list(vars(v).items()):
                    if isinstance(av, _KINDS):
                        snap.append((m, (k, ak), av))
    return snap


def _changed(snap):
    out = []
    for m, attrs, obj in snap:
        cur = sys.modules.get(m)
        for a in attrs:
            cur = vars(cur).get(a) if hasattr(cur, "__dict__") else None
        if cur is not obj:
            out.append(".".join((m,) + attrs))
    return out


_CRITICAL = [
    "pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
    "pytest_runtest_makereport", "pytest_runtest_logreport", "pytest_pyfunc_call", "pytest_report_teststatus",
    "pytest_runtestloop", "pytest_collection_modifyitems", "pytest_sessionfinish",
]


class BenchgymRecorder(object):
    """Each report as it happens, the ids collected, and the config (for the plugins' check)."""

    def __init__(self):
        self.results = []
        self.collected = None
        self.config = None

    def pytest_configure(self, config):
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        self.results.append([report.nodeid, report.when, report.outcome])

    def pytest_collection_finish(self, session):
        self.collected = [item.nodeid for item in session.items]


def _workspace_hooks(config):
    """Hooks of the test run implemented by plugins from the workspace other than conftest.py files and the plugins they name."""
    pm = config.pluginmanager
    allowed = set(getattr(config.option, "plugins", None) or [])
    for p in pm.get_plugins():
        if isinstance(p, types.ModuleType) and os.path.basename(getattr(p, "__file__", "") or "") == "conftest.py":
            named = getattr(p, "pytest_plugins", ())
            allowed.update([named] if isinstance(named, str) else list(named))
    found = []
    for hook in _CRITICAL:
        caller = getattr(pm.hook, hook, None)
        if caller is None:
            continue
        impls = caller.get_hookimpls() if hasattr(caller, "get_hookimpls") else list(getattr(caller, "_nonwrappers", [])) + list(getattr(caller, "_wrappers", []))
        for impl in impls:
            plugin = impl.plugin
            mod = plugin if isinstance(plugin, types.ModuleType) else sys.modules.get(type(plugin).__module__)
            f = getattr(mod, "__file__", None)
            if not f or not _inside(f) or os.path.basename(f) == "conftest.py":
                continue
            if getattr(mod, "__name__", None) in allowed or pm.get_name(plugin) in allowed:
                continue
            found.append("a plugin from the workspace (%s) implements %s" % (getattr(mod, "__name__", f), hook))
    return found


_recorder = BenchgymRecorder()
_snap = _snapshot()
_args = sys.argv[2:]
sys.path.insert(0, os.getcwd())
_code = pytest.main(_args, plugins=_env_plugins + [_recorder])
try:
    _code = int(_code)
except Exception:
    _code = 3
_replaced = _changed(_snap)
_tamper = ["pytest internals replaced during the run: " + ", ".join(sorted(_replaced)[:8])] if _replaced else []
try:
    if _recorder.config is not None:
        _tamper += sorted(set(_workspace_hooks(_recorder.config)))
except Exception as e:
    _notes.append("the plugins' check failed: %s" % e)
_junit = None
for _a in _args:
    if _a.startswith("--junitxml="):
        try:
            with open(_a.split("=", 1)[1], "rb") as _f:
                _junit = hashlib.sha256(_f.read()).hexdigest()
        except OSError:
            pass
with open(_out, "w") as _f:
    json.dump({"nonce": _nonce, "exit": _code, "junit": _junit, "tamper": _tamper, "notes": _notes, "results": _recorder.results, "collected": _recorder.collected}, _f)
sys.stdout.flush()
_real_exit(_code)
