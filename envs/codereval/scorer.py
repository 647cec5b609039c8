"""CoderEval's Python scoring procedure, as its platform runs it (benchgym envs/codereval).

The platform's test file for a task is the task's source file with the target function in
place and a __main__ block that checks it. To score a candidate: find the target function in
the test file with `ast` (by its path from the module, `Symbol.pretty`, as `find_function` says), replace its lines [lineno-1, end_lineno)
with the candidate re-indented to the original's column, run the file with this interpreter
(30 s), and pass iff the exit code is 0.

The candidate is either a raw completion (--candidate FILE, used verbatim: how published
outputs are replayed) or the function of that name in the agent's source file (--source FILE,
from its `def` line to its last line, as `ast` sees it).

Inside a project (--root-alias /home/travis/builds/repos/<owner---repo>), the test file sits at its
own path in the project, the working directory, and that root is rewritten to the working directory
in the file that runs: the platform's `sys.path.append(...)` lines then name the project here. The
platform had the project installed in its venv; here the working directory is put on PYTHONPATH,
with the folders an install would have put there (`src/` of a src layout, a sub-project's folder)
and the dist-info it would have written (the name and version the project declares).
`'repos/<owner---repo>...'` (relative to the platform's /home/travis/builds) is rewritten too; the
platform's repos folder itself, when a test puts it on sys.path to import the project by its folder's
name, becomes `.codereval/repos/` holding the project under that name; and a top-level import of a
module beside the test is served as that module of its package (SIBLINGS).

Exit codes: the test's own (0 passes), 1 for a timeout or a candidate that cannot be read,
2 for a broken harness call.

Strict mode (BENCHGYM_SCORING=strict, benchgym's default outside replays): the file runs under
a small runner that is handed a nonce through a pipe (read and closed before the test starts)
and writes it to a second pipe only once the test file has run to its end. An exit 0 without
it (os._exit in the function), or a SystemExit raised from the candidate's own lines, fails
with `TAMPER_SUSPECTED: exited before the test's end` on stderr.
"""
import argparse
import ast
import os
import re
import subprocess
import sys
import textwrap


def find_function(tree, name):
    """The target function. `name` is a name or a dotted path from the module (`Symbol.pretty`:
    the classes around it): the function inside those classes when the file has one there; else
    the first function (ast.walk order) of that name, else `_name` (a test file may hold a method
    as a module-level function)."""
    *scope, last = name.split(".")
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    if scope:
        parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node

        def names_around(node):
            out = []
            node = parents.get(node)
            while node is not None:
                if isinstance(node, functions + (ast.ClassDef,)):
                    out.append(node.name)
                node = parents.get(node)
            return out[::-1]

        for wanted in (last, "_" + last):
            for node in ast.walk(tree):
                if isinstance(node, functions) and node.name == wanted and names_around(node) == scope:
                    return node
    for wanted in (last, "_" + last):
        for node in ast.walk(tree):
            if isinstance(node, functions) and node.name == wanted:
                return node
    return None


def candidate_from_source(path, name):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise SystemExit(f"CANDIDATE: {path} does not parse: {e}")
    node = find_function(tree, name)
    if node is None:
        raise SystemExit(f"CANDIDATE: no function {name} in {path}")
    lines = source.splitlines()
    return "\n".join(lines[node.lineno - 1 : node.end_lineno])


# Runs the test file as `python FILE` would, then reports its end with the nonce (strict mode).
RUNNER = r"""
import os, runpy, sys, traceback


def main():
    r, w, path, lo, hi = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    nonce = os.read(r, 256).decode()
    os.close(r)
    write, real = os.write, os.path.realpath(path)
    sys.argv = [path]
    sys.path[0] = os.path.dirname(real)

    def from_candidate(tb):
        while tb is not None:
            if os.path.realpath(tb.tb_frame.f_code.co_filename) == real and lo <= tb.tb_lineno <= hi:
                return True
            tb = tb.tb_next
        return False

    try:
        runpy.run_path(path, run_name="__main__")
        code = 0
    except SystemExit as e:
        if from_candidate(e.__traceback__):
            write(w, ("candidate-exit " + nonce + "\n").encode())
            os.close(w)
            raise
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    write(w, ("end " + nonce + " " + str(code) + "\n").encode())
    os.close(w)
    return code


sys.exit(main())
"""


def run_strict(out, timeout, lo, hi, env=None):
    """The test file under RUNNER: its exit code, and whether it reached its end by itself."""
    import secrets

    nonce = secrets.token_hex(16)
    from_parent, to_child = os.pipe()
    from_child, to_parent = os.pipe()
    os.write(to_child, nonce.encode())
    os.close(to_child)
    try:
        proc = subprocess.run([sys.executable, "-c", RUNNER, str(from_parent), str(to_parent), out, str(lo), str(hi)], pass_fds=(from_parent, to_parent), timeout=timeout, env=env)
    finally:
        os.close(from_parent)
        os.close(to_parent)
    os.set_blocking(from_child, False)
    said = b""
    while True:
        try:
            chunk = os.read(from_child, 4096)
        except BlockingIOError:
            break
        if not chunk:
            break
        said += chunk
    os.close(from_child)
    lines = said.decode(errors="replace").split("\n")
    if "candidate-exit " + nonce in lines and proc.returncode == 0:
        return proc.returncode, "exited before the test's end (SystemExit raised in the function)"
    ended = [l for l in lines if l.startswith("end " + nonce + " ")]
    if not ended:
        return proc.returncode, "exited before the test's end (the process ended without the runner's record)" if proc.returncode == 0 else None
    if int(ended[-1].split()[-1]) != proc.returncode:
        return proc.returncode, "exited before the test's end (exit code %d where the test ended with %s)" % (proc.returncode, ended[-1].split()[-1])
    return proc.returncode, None


# Inside a project: the platform's test files import their siblings as top-level modules
# (`from fifo import FIFOCache` in cachetools/), while those siblings import relatively
# (`from .cache import Cache`). A top-level import of a module beside the test is served as
# that module of its package (`cachetools.fifo`), so both kinds of import work as they did on
# the platform. A sibling named as an installed package (site-packages) gives way to that package.
# Loaded at start-up as sitecustomize from a folder on PYTHONPATH.
SIBLINGS = r"""
import importlib, importlib.abc, importlib.machinery, os, sys

_root, _dir = os.environ.get("BENCHGYM_PROJECT_ROOT"), os.environ.get("BENCHGYM_TEST_DIR")
_rel = os.path.relpath(_dir, _root) if _root and _dir else "."
_parts = [] if _rel in (".", "") or _rel.startswith("..") else _rel.split(os.sep)
if _parts and all(p.isidentifier() for p in _parts) and os.path.isfile(os.path.join(_dir, "__init__.py")):
    _package = ".".join(_parts)

    class _Alias(importlib.abc.Loader):
        def __init__(self, full):
            self.full = full

        def create_module(self, spec):
            return importlib.import_module(self.full)

        def exec_module(self, module):
            pass

    class _Siblings(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            # Built-in modules come first on the platform too (`time` beside neo4j's time/ package).
            if path is not None or "." in name or name == _parts[0] or name in sys.builtin_module_names:
                return None
            if not (os.path.isfile(os.path.join(_dir, name + ".py")) or os.path.isfile(os.path.join(_dir, name, "__init__.py"))):
                return None
            # An installed package of that name comes first (federation's utils/django.py helper imports
            # `django.conf`, the platform's verdicts show Django there): the sibling is its package's module.
            installed = importlib.machinery.PathFinder.find_spec(name, [p for p in sys.path if "-packages" in p])
            if installed is not None and installed.origin:
                return installed
            return importlib.machinery.ModuleSpec(name, _Alias(_package + "." + name))

    sys.meta_path.insert(0, _Siblings())
"""


def installed_roots(root):
    """Where an installed copy of the project would put its packages, besides its root: `src/`
    in a src layout (zope.interface's `src/zope/`), and a sub-folder holding its own setup.py or
    pyproject.toml (Krake's `krake/`). The platform had the project installed in its venv, so
    `import zope.interface` worked beside the tests' `import src.zope.interface`."""
    found = []
    src = os.path.join(root, "src")
    if os.path.isdir(src) and not os.path.isfile(os.path.join(src, "__init__.py")):
        found.append(src)
    for name in sorted(os.listdir(root)):
        sub = os.path.join(root, name)
        if name != "src" and not name.startswith(".") and os.path.isdir(sub) and any(os.path.isfile(os.path.join(sub, f)) for f in ("setup.py", "pyproject.toml")):
            found.append(sub)
    return found


def declared_name_version(root):
    """The project's distribution name and version as it declares them (setup.cfg's [metadata],
    pyproject.toml's [project], or literal `name=` / `version=` in setup.py), or None."""
    import configparser
    cfg = os.path.join(root, "setup.cfg")
    if os.path.isfile(cfg):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(cfg, encoding="utf-8")
            name = parser.get("metadata", "name", fallback=None)
            if name:
                version = parser.get("metadata", "version", fallback="0")
                return name.strip(), version.strip() if re.match(r"^[0-9][\w.+-]*$", version.strip()) else "0"
        except configparser.Error:
            pass
    for file, section in (("pyproject.toml", r"\[project\]"), ("setup.py", None)):
        path = os.path.join(root, file)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if section:
            m = re.search(section + r"(.*?)(?=^\[|\Z)", text, re.S | re.M)
            text = m.group(1) if m else ""
        name = re.search(r"""\bname\s*=\s*['"]([A-Za-z0-9][\w.-]*)['"]""", text)
        version = re.search(r"""\bversion\s*=\s*['"]([0-9][\w.+-]*)['"]""", text)
        if name:
            return name.group(1), version.group(1) if version else "0"
    return None


def write_installed_metadata(root, folder):
    """What `pip install` of the project would have left for importlib.metadata and pkg_resources:
    a dist-info folder naming it (pre-commit's constants.py reads its own version that way)."""
    found = declared_name_version(root)
    if not found:
        return
    name, version = found
    info = os.path.join(folder, re.sub(r"[-.]+", "_", name) + "-" + version + ".dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as f:
        f.write("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version))


def reindent(code, column):
    body = textwrap.dedent(code)
    return "\n".join((" " * column + line) if line.strip() else line for line in body.split("\n"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--test", required=True, help="the platform's test file")
    ap.add_argument("--name", required=True, help="the target function's name")
    ap.add_argument("--source", help="the agent's source file holding the function")
    ap.add_argument("--candidate", help="a raw candidate, used verbatim")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--out", help="where the file to run is written (default: the test file itself, restored afterwards)")
    ap.add_argument("--setenv", action="append", default=[], metavar="NAME=VALUE", help="an environment variable of CoderEval's image that the project's tests read (repeatable)")
    ap.add_argument("--root-alias", help="the project's root in CoderEval's image (/home/travis/builds/repos/<owner---repo>): rewritten to the working directory, the project here")
    args = ap.parse_args()
    for pair in args.setenv:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", pair):
            print(f"HARNESS: --setenv {pair!r} is not NAME=VALUE", file=sys.stderr)
            return 2

    with open(args.test, encoding="utf-8") as f:
        test_source = f.read()
    tree = ast.parse(test_source)
    target = find_function(tree, args.name)
    if target is None:
        print(f"HARNESS: no function {args.name} in the test file", file=sys.stderr)
        return 2

    if args.candidate and os.path.exists(args.candidate):
        with open(args.candidate, encoding="utf-8") as f:
            candidate = f.read()
    elif args.source:
        candidate = candidate_from_source(args.source, args.name)
    else:
        print("HARNESS: neither --candidate nor --source", file=sys.stderr)
        return 2

    lines = test_source.split("\n")
    start, end = target.lineno - 1, target.end_lineno
    combined = "\n".join(lines[:start] + [reindent(candidate, target.col_offset)] + lines[end:])
    if args.root_alias:
        # The platform's tests put its copy of the project on sys.path: here the project is the working directory.
        alias = args.root_alias.rstrip("/")
        combined = combined.replace(alias, os.getcwd())
        # Some tests name it relative to the platform's working directory (/home/travis/builds): 'repos/<owner---repo>/...'.
        relative = alias[len("/home/travis/builds/"):] if alias.startswith("/home/travis/builds/") else None
        if relative:
            combined = re.sub("([\"'])" + re.escape(relative) + "(?=[/\"'])", lambda m: m.group(1) + os.getcwd(), combined)
        # Some import the project by its folder's name from the platform's repos folder, which they put on
        # sys.path (`import_module("witten---atticmatic.borgmatic.config.collect")`): that folder is served
        # here by one that holds the project under its platform name.
        parent, name = os.path.split(alias)
        repos = os.path.join(os.path.dirname(os.path.abspath(__file__)), "repos")
        combined, named = re.subn(re.escape(parent) + "(?=[\"'])", lambda m: repos, combined)
        if named:
            os.makedirs(repos, exist_ok=True)
            if not os.path.lexists(os.path.join(repos, name)):
                os.symlink(os.getcwd(), os.path.join(repos, name))
    # The platform ran the test file itself with the candidate in it: tests that name their own file
    # (pysolbase's extostr looks for `SolBase_extostr_passk_validte.py@<line>` in a traceback) see
    # that name. The test's own text is put back afterwards.
    out = os.path.abspath(args.out or args.test)
    in_place = out == os.path.abspath(args.test)
    with open(out, "w", encoding="utf-8") as f:
        f.write(combined)
    try:
        return run_combined(args, out, candidate, target, start)
    finally:
        if in_place:
            with open(out, "w", encoding="utf-8") as f:
                f.write(test_source)


# Where the project's `.git` waits while its test runs: the platform's copy of a project was no
# git repository (prestoplot's versioneer test expects `git rev-parse --git-dir` to fail there
# with 128). Beside it, not in the harness folder, which is reset before each scoring.
GIT_ASIDE = ".codereval-dot-git"


def restore_git():
    """Puts the project's `.git` back (also after a run that was cut short)."""
    if os.path.lexists(GIT_ASIDE) and not os.path.lexists(".git"):
        os.rename(GIT_ASIDE, ".git")


def run_combined(args, out, candidate, target, start):
    """Runs the test file with the candidate in it (at `out`), as the platform ran it."""
    if not args.root_alias:
        return run_file(args, out, candidate, target, start, None)
    restore_git()
    if os.path.lexists(".git") and not os.path.lexists(GIT_ASIDE):
        os.rename(".git", GIT_ASIDE)
    try:
        return run_file(args, out, candidate, target, start, project_env(out, args.setenv))
    finally:
        restore_git()


def project_env(out, setenv):
    """The environment of a test run inside its project."""
    # The platform had each project installed in its venv: here its root is on the path instead.
    env = dict(os.environ)
    boot = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot")
    os.makedirs(boot, exist_ok=True)
    with open(os.path.join(boot, "sitecustomize.py"), "w", encoding="utf-8") as f:
        f.write(SIBLINGS)
    write_installed_metadata(os.getcwd(), boot)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd()] + installed_roots(os.getcwd()) + [boot] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["BENCHGYM_PROJECT_ROOT"] = os.getcwd()
    env["BENCHGYM_TEST_DIR"] = os.path.dirname(os.path.abspath(out))
    for pair in setenv:
        name, _, value = pair.partition("=")
        env[name] = value
    return env


def run_file(args, out, candidate, target, start, env):
    """Runs the file at `out` (the test with the candidate in it): its exit code decides."""
    strict = os.environ.get("BENCHGYM_SCORING") == "strict"
    try:
        if strict:
            code = reindent(candidate, target.col_offset)
            returncode, tamper = run_strict(out, args.timeout, start + 1, start + code.count("\n") + 1, env)
        else:
            returncode, tamper = subprocess.run([sys.executable, out], timeout=args.timeout, env=env).returncode, None
    except subprocess.TimeoutExpired:
        print(f"TIMEOUT: the test did not finish within {args.timeout:g} s", file=sys.stderr)
        return 1
    print(f"exit code {returncode}", file=sys.stderr)
    if tamper:
        print(f"TAMPER_SUSPECTED: {tamper}", file=sys.stderr)
        return 1
    return 0 if returncode == 0 else (returncode if 0 < returncode < 126 else 1)


if __name__ == "__main__":
    sys.exit(main())
