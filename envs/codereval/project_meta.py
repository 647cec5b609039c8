"""What a project declares about its environment, read without running any of its code.

Usage: python project_meta.py ROOT [SUBDIR...]  (SUBDIRs: package folders with their own metadata)
Prints JSON: {"requirements": [...], "python_requires": str|null, "classifiers": ["3.8", ...], "sources": [...]}.

setup.py is parsed with ast (never executed): install_requires, python_requires and classifiers
when they are literals, or names bound to literals at module level; setup.cfg with configparser;
pyproject.toml with tomllib (PEP 621 and Poetry); requirements.txt with its -r includes.
"""
import ast
import configparser
import json
import os
import re
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def literal(node, names):
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = literal(node.left, names), literal(node.right, names)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return None
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def from_setup_py(path):
    tree = ast.parse(open(path, encoding="utf-8", errors="replace").read())
    names = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = literal(stmt.value, names)
            if value is not None:
                names[stmt.targets[0].id] = value
    out = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
        if name != "setup":
            continue
        for kw in node.keywords:
            if kw.arg in ("install_requires", "python_requires", "classifiers"):
                value = literal(kw.value, names)
                if value is not None:
                    out[kw.arg] = value
            elif kw.arg is None:  # setup(**kwargs)
                value = literal(kw.value, names)
                if isinstance(value, dict):
                    for k in ("install_requires", "python_requires", "classifiers"):
                        if k in value:
                            out[k] = value[k]
    return out


def from_setup_cfg(path):
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(path, encoding="utf-8")
    out = {}
    if cfg.has_option("options", "install_requires"):
        out["install_requires"] = [l.strip() for l in cfg.get("options", "install_requires").splitlines() if l.strip()]
    if cfg.has_option("options", "python_requires"):
        out["python_requires"] = cfg.get("options", "python_requires").strip()
    if cfg.has_option("metadata", "classifiers"):
        out["classifiers"] = [l.strip() for l in cfg.get("metadata", "classifiers").splitlines() if l.strip()]
    return out


def from_pyproject(path):
    if tomllib is None:
        return {}
    data = tomllib.load(open(path, "rb"))
    out = {}
    project = data.get("project") or {}
    if project.get("dependencies"):
        out["install_requires"] = list(project["dependencies"])
    if project.get("requires-python"):
        out["python_requires"] = project["requires-python"]
    if project.get("classifiers"):
        out["classifiers"] = list(project["classifiers"])
    poetry = (data.get("tool") or {}).get("poetry") or {}
    deps = poetry.get("dependencies") or {}
    if deps and "install_requires" not in out:
        reqs = []
        for name, spec in deps.items():
            if name.lower() == "python":
                if isinstance(spec, str):
                    out.setdefault("python_requires", spec)
                continue
            reqs.append(name)  # Poetry's ^ and ~ ranges have no pip spelling: the name, bounded by the era
        out["install_requires"] = reqs
    return out


def from_requirements(path, seen=None):
    seen = seen or set()
    if path in seen or not os.path.isfile(path):
        return []
    seen.add(path)
    reqs = []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^(?:-r|--requirement)\s+(\S+)", line)
        if m:
            reqs += from_requirements(os.path.join(os.path.dirname(path), m.group(1)), seen)
            continue
        if line.startswith("-") or "://" in line or line.startswith("."):
            continue  # options, editable installs and URLs
        reqs.append(line)
    return reqs


def main():
    root = sys.argv[1]
    dirs = [root] + [os.path.join(root, d) for d in sys.argv[2:]]
    requirements, sources, classifiers = [], [], []
    python_requires = None
    for d in dirs:
        rel = os.path.relpath(d, root)
        found = {}
        for fname, reader in (("setup.cfg", from_setup_cfg), ("pyproject.toml", from_pyproject), ("setup.py", from_setup_py)):
            p = os.path.join(d, fname)
            if os.path.isfile(p):
                try:
                    got = reader(p)
                except Exception as e:  # an unparsable file says nothing
                    got = {}
                    sources.append(f"{os.path.join(rel, fname)} (unreadable: {type(e).__name__})")
                for k, v in got.items():
                    found.setdefault(k, v)
                if got:
                    sources.append(os.path.normpath(os.path.join(rel, fname)))
        reqs = [r for r in found.get("install_requires") or [] if isinstance(r, str)]
        p = os.path.join(d, "requirements.txt")
        if os.path.isfile(p):
            from_file = from_requirements(p)
            if from_file:
                sources.append(os.path.normpath(os.path.join(rel, "requirements.txt")))
            reqs += from_file
        requirements += reqs
        python_requires = python_requires or found.get("python_requires")
        for c in found.get("classifiers") or []:
            m = re.match(r"^Programming Language :: Python :: (3\.\d+)$", str(c).strip())
            if m:
                classifiers.append(m.group(1))
    print(json.dumps({"requirements": requirements, "python_requires": python_requires, "classifiers": sorted(set(classifiers), key=lambda v: int(v.split(".")[1])), "sources": sources}))


if __name__ == "__main__":
    main()
