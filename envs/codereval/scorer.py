"""CoderEval's Python scoring procedure, as its platform runs it (benchgym envs/codereval).

The platform's test file for a task is the task's source file with the target function in
place and a __main__ block that checks it. To score a candidate: find the target function in
the test file with `ast` (by name, or "_" + name), replace its lines [lineno-1, end_lineno)
with the candidate re-indented to the original's column, run the file with this interpreter
(30 s), and pass iff the exit code is 0.

The candidate is either a raw completion (--candidate FILE, used verbatim: how published
outputs are replayed) or the function of that name in the agent's source file (--source FILE,
from its `def` line to its last line, as `ast` sees it).

Exit codes: the test's own (0 passes), 1 for a timeout or a candidate that cannot be read,
2 for a broken harness call.
"""
import argparse
import ast
import os
import subprocess
import sys
import textwrap


def find_function(tree, name):
    """The first function (ast.walk order) named `name`, else `_name`."""
    for wanted in (name, "_" + name):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == wanted:
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
    ap.add_argument("--out", help="where the file to run is written (default: next to --test)")
    args = ap.parse_args()

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
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.test)), "run_" + os.path.basename(args.test))
    with open(out, "w", encoding="utf-8") as f:
        f.write(combined)
    try:
        proc = subprocess.run([sys.executable, out], timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"TIMEOUT: the test did not finish within {args.timeout:g} s", file=sys.stderr)
        return 1
    print(f"exit code {proc.returncode}", file=sys.stderr)
    return 0 if proc.returncode == 0 else (proc.returncode if 0 < proc.returncode < 126 else 1)


if __name__ == "__main__":
    sys.exit(main())
