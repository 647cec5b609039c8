"""What a Python repository's own files declare about its environment at one commit.

Reads a JSON object {"files": {path: content}, "tests": {path: head}} on stdin (setup.py, setup.cfg, pyproject.toml, tox.ini,
.travis.yml, GitHub workflows, requirements files, pytest.ini, conftest.py...) and writes one
JSON object: the Python versions the files name (requires-python specifiers; versions listed
by classifiers, the tox envlist and CI files), the dependencies (runtime and test), and the
test runner the repository uses (pytest, nose or unittest) with what said so. Nothing is
executed: setup.py is read with `ast` (literal arguments, and names bound to literals at
module level), the rest with configparser, tomllib and line patterns for YAML.
"""
import ast
import configparser
import json
import re
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11 on the host
    tomllib = None

VERSION = re.compile(r"^(\d)\.(\d+)$")


def listed(out, where, versions):
    for v in versions:
        v = str(v).strip().strip("'\"")
        m = VERSION.match(v)
        if m:
            out["listed"].setdefault(v, []).append(where)


def classifiers(out, where, items):
    for c in items or []:
        m = re.match(r"^Programming Language :: Python :: (\d\.\d+)\s*$", str(c))
        if m:
            listed(out, where, [m.group(1)])


def requirement_lines(text):
    """Plain requirement specifiers of a requirements-style block (no -r, -e, URLs or options)."""
    reqs = []
    for line in (text or "").splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith(("#", "-", "{", ".", "/")) or "://" in line or "{" in line:
            continue
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*", line):
            continue
        reqs.append(line)
    return reqs


def add_deps(out, key, where, reqs):
    for r in reqs:
        r = str(r).strip()
        if r and r not in out[key]:
            out[key].append(r)
    if reqs:
        out["sources"].append(where)


def literal(node, names):
    try:
        return ast.literal_eval(node)
    except Exception:
        pass
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = literal(node.left, names), literal(node.right, names)
        if isinstance(a, list) and isinstance(b, list):
            return a + b
    return None


TEST_EXTRAS = ("test", "tests", "testing")


def read_setup_py(out, src):
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return
    names = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            try:
                names[stmt.targets[0].id] = ast.literal_eval(stmt.value)
            except Exception:
                pass
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
        if name != "setup":
            continue
        kw = {k.arg: literal(k.value, names) for k in node.keywords if k.arg}
        if isinstance(kw.get("python_requires"), str):
            out["requires"].append({"spec": kw["python_requires"], "from": "setup.py python_requires"})
        classifiers(out, "setup.py classifiers", kw.get("classifiers") if isinstance(kw.get("classifiers"), list) else [])
        for key, target in (("install_requires", "dependencies"), ("tests_require", "test_dependencies")):
            value = kw.get(key)
            if isinstance(value, str):
                value = requirement_lines(value)
            if isinstance(value, list):
                add_deps(out, target, f"setup.py {key}", [v for v in value if isinstance(v, str)])
        extras = kw.get("extras_require")
        if isinstance(extras, dict):
            for extra in TEST_EXTRAS:
                if isinstance(extras.get(extra), list):
                    add_deps(out, "test_dependencies", f"setup.py extras_require[{extra}]", extras[extra])
        setup_requires = kw.get("setup_requires")
        if isinstance(setup_requires, list) and any(str(r).startswith("pytest-runner") for r in setup_requires):
            out["runner_evidence"]["pytest"].append("setup.py setup_requires pytest-runner")


def read_setup_cfg(out, src):
    cfg = configparser.ConfigParser(interpolation=None)
    try:
        cfg.read_string(src)
    except configparser.Error:
        return
    if cfg.has_option("options", "python_requires"):
        out["requires"].append({"spec": cfg.get("options", "python_requires"), "from": "setup.cfg python_requires"})
    if cfg.has_option("metadata", "classifiers"):
        classifiers(out, "setup.cfg classifiers", cfg.get("metadata", "classifiers").splitlines())
    if cfg.has_option("options", "install_requires"):
        add_deps(out, "dependencies", "setup.cfg install_requires", requirement_lines(cfg.get("options", "install_requires")))
    if cfg.has_option("options", "tests_require"):
        add_deps(out, "test_dependencies", "setup.cfg tests_require", requirement_lines(cfg.get("options", "tests_require")))
    for extra in TEST_EXTRAS:
        if cfg.has_option("options.extras_require", extra):
            add_deps(out, "test_dependencies", f"setup.cfg extras_require[{extra}]", requirement_lines(cfg.get("options.extras_require", extra)))
    if cfg.has_section("tool:pytest") or cfg.has_section("pytest"):
        out["runner_evidence"]["pytest"].append("setup.cfg [tool:pytest]")
    if cfg.has_section("nosetests"):
        out["runner_evidence"]["nose"].append("setup.cfg [nosetests]")


def read_pyproject(out, src):
    if tomllib is None:
        return
    try:
        doc = tomllib.loads(src)
    except Exception:
        return
    project = doc.get("project") or {}
    if isinstance(project.get("requires-python"), str):
        out["requires"].append({"spec": project["requires-python"], "from": "pyproject.toml requires-python"})
    classifiers(out, "pyproject.toml classifiers", project.get("classifiers"))
    if isinstance(project.get("dependencies"), list):
        add_deps(out, "dependencies", "pyproject.toml dependencies", project["dependencies"])
    optional = project.get("optional-dependencies") or {}
    for extra in TEST_EXTRAS:
        if isinstance(optional.get(extra), list):
            add_deps(out, "test_dependencies", f"pyproject.toml optional-dependencies.{extra}", optional[extra])
    groups = doc.get("dependency-groups") or {}
    for extra in TEST_EXTRAS:
        if isinstance(groups.get(extra), list):
            add_deps(out, "test_dependencies", f"pyproject.toml dependency-groups.{extra}", [g for g in groups[extra] if isinstance(g, str)])
    tool = doc.get("tool") or {}
    poetry = tool.get("poetry") or {}
    deps = poetry.get("dependencies") or {}
    if isinstance(deps.get("python"), str):
        out["requires"].append({"spec": deps["python"], "from": "pyproject.toml tool.poetry.dependencies.python"})
    classifiers(out, "pyproject.toml tool.poetry classifiers", poetry.get("classifiers"))

    def poetry_deps(table, key, where):
        reqs = []
        for name, spec in (table or {}).items():
            if name.lower() == "python":
                continue
            if isinstance(spec, str):
                reqs.append(name if spec.strip() == "*" else name + poetry_spec(spec))
            elif isinstance(spec, dict) and isinstance(spec.get("version"), str) and not spec.get("optional"):
                reqs.append(name + poetry_spec(spec["version"]))
        add_deps(out, key, where, reqs)

    poetry_deps(deps, "dependencies", "pyproject.toml tool.poetry.dependencies")
    poetry_deps(poetry.get("dev-dependencies"), "test_dependencies", "pyproject.toml tool.poetry.dev-dependencies")
    for name, group in (poetry.get("group") or {}).items():
        if name in TEST_EXTRAS + ("dev",):
            poetry_deps((group or {}).get("dependencies"), "test_dependencies", f"pyproject.toml tool.poetry.group.{name}")
    if "ini_options" in (tool.get("pytest") or {}):
        out["runner_evidence"]["pytest"].append("pyproject.toml [tool.pytest.ini_options]")


def poetry_spec(spec):
    """Poetry's ^ and ~ constraints as PEP 440 specifiers."""
    spec = spec.strip()
    m = re.match(r"^\^(\d+)(?:\.(\d+))?(?:\.(\d+))?$", spec)
    if m:
        major = int(m.group(1))
        if major > 0 or m.group(2) is None:
            return f">={spec[1:]},<{major + 1}"
        return f">={spec[1:]},<0.{int(m.group(2)) + 1}"
    m = re.match(r"^~(\d+)\.(\d+)(?:\.\d+)?$", spec)
    if m:
        return f">={spec[1:]},<{m.group(1)}.{int(m.group(2)) + 1}"
    if re.match(r"^\d", spec):
        return "==" + spec
    return spec


def read_tox(out, src):
    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        cfg.read_string(src)
    except configparser.Error:
        return
    if cfg.has_option("tox", "envlist"):
        envlist = cfg.get("tox", "envlist")
        versions = []
        # Commas inside braces (py{38,39}-django) do not split.
        tokens, depth, current = [], 0, ""
        for ch in envlist:
            depth += (ch == "{") - (ch == "}")
            if depth == 0 and (ch == "," or ch.isspace()):
                tokens.append(current)
                current = ""
            else:
                current += ch
        tokens.append(current)
        for token in filter(None, tokens):
            for m in re.finditer(r"(?:^|[-{,])py(\d)(\d+)", token):
                versions.append(f"{m.group(1)}.{m.group(2)}")
            brace = re.match(r"^py\{([\d,]+)\}", token)
            if brace:
                versions += [f"{d[0]}.{d[1:]}" for d in brace.group(1).split(",") if len(d) >= 2]
        listed(out, "tox.ini envlist", versions)
    if cfg.has_option("testenv", "deps"):
        add_deps(out, "test_dependencies", "tox.ini [testenv] deps", requirement_lines(cfg.get("testenv", "deps")))
    commands = cfg.get("testenv", "commands") if cfg.has_option("testenv", "commands") else ""
    if re.search(r"\b(py\.test|pytest)\b", commands):
        out["runner_evidence"]["pytest"].append("tox.ini commands")
    if re.search(r"\bnosetests\b|\bnose2?\b", commands):
        out["runner_evidence"]["nose"].append("tox.ini commands")
    if cfg.has_section("pytest"):
        out["runner_evidence"]["pytest"].append("tox.ini [pytest]")


def read_ci_yaml(out, where, src):
    """Python versions of a Travis or GitHub Actions file: `python:` / `python-version:` values and lists."""
    versions = []
    lines = src.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)-?\s*(python|python-version|python_version)\s*:\s*(.*)$", line)
        if not m:
            continue
        value = m.group(3).split("#")[0].strip()
        if value:
            versions += re.findall(r"(?<![\d.])(\d\.\d+)(?![\d])", value)
            continue
        indent = len(m.group(1))
        for follow in lines[i + 1:]:
            item = re.match(r"^(\s*)-\s*(.+)$", follow)
            if not item or len(item.group(1)) < indent:
                break
            versions += re.findall(r"(?<![\d.])(\d\.\d+)(?![\d])", item.group(2).split("#")[0])
    listed(out, where, versions)
    if re.search(r"\b(py\.test|pytest)\b", src):
        out["runner_evidence"]["pytest"].append(f"{where} runs pytest")
    if re.search(r"\bnosetests\b", src):
        out["runner_evidence"]["nose"].append(f"{where} runs nosetests")


def main():
    given = json.load(sys.stdin)
    files = given.get("files", {})
    # The heads of (some of) the test files, for the runner when no configuration names it.
    tests = given.get("tests", {})
    out = {"requires": [], "listed": {}, "dependencies": [], "test_dependencies": [], "sources": [], "runner_evidence": {"pytest": [], "nose": []}}
    for name in sorted(files):
        src = files[name]
        base = name.rsplit("/", 1)[-1]
        if name == "setup.py":
            read_setup_py(out, src)
        elif name == "setup.cfg":
            read_setup_cfg(out, src)
        elif name == "pyproject.toml":
            read_pyproject(out, src)
        elif name == "tox.ini":
            read_tox(out, src)
        elif name == ".travis.yml" or name.startswith(".github/workflows/"):
            read_ci_yaml(out, name, src)
        elif base.endswith(".txt") and "requirements" in name:
            # The documentation's build (Sphinx and its themes) is not what the tests need.
            if re.search(r"(^|[-_/.])(docs?|rtd|readthedocs|sphinx)([-_/.]|$)", name):
                continue
            key = "dependencies" if name == "requirements.txt" else "test_dependencies"
            add_deps(out, key, name, requirement_lines(src))
        elif base == "pytest.ini":
            out["runner_evidence"]["pytest"].append("pytest.ini")
        elif base == "conftest.py":
            out["runner_evidence"]["pytest"].append(name)
    deps = [d.lower() for d in out["dependencies"] + out["test_dependencies"]]
    if any(re.match(r"^pytest\b", d) for d in deps):
        out["runner_evidence"]["pytest"].append("a pytest requirement")
    if any(re.match(r"^nose2?\b", d) for d in deps):
        out["runner_evidence"]["nose"].append("a nose requirement")
    ev = out["runner_evidence"]
    if not ev["pytest"] and not ev["nose"]:
        # No configuration says: what the test files import (plain test functions are pytest's style).
        for name in sorted(tests):
            src = tests[name]
            if re.search(r"^\s*(import nose|from nose)", src, re.M):
                ev["nose"].append(f"{name} imports nose")
            elif re.search(r"^\s*(import pytest|from pytest)", src, re.M):
                ev["pytest"].append(f"{name} imports pytest")
            elif re.search(r"^\s*(import unittest|from unittest)", src, re.M):
                ev.setdefault("unittest", []).append(f"{name} imports unittest")
    out["runner"] = "pytest" if ev["pytest"] else "nose" if ev["nose"] else "unittest" if ev.get("unittest") else "pytest"
    ev.pop("unittest", None)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
