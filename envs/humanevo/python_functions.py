"""Functions and methods of Python sources, for HumanEvo's task builder (read with python3's ast).

Input (stdin, JSON): {"files": {"path": "source", ...}, "project": ["top-level module names"]}.
Output (stdout, JSON): {"path": {"functions": [...]} or {"error": "..."}}.
Each function: qualname, name, cls, lines (decorators..end), def_line, body_line (first line
after the docstring, 0 when the body is only a docstring), body_col, one_line, docstring,
signature (source text of the def up to its colon), trivial, constructor, dependency
(standalone | intra-class | inter-class) and the references that decided it.
"""
import ast
import builtins
import json
import sys

CONSTRUCTORS = {'__init__', '__new__', '__del__', '__post_init__', '__init_subclass__', '__class_getitem__', 'setUp', 'tearDown', 'setUpClass', 'tearDownClass'}
BUILTINS = set(dir(builtins)) | {'__name__', '__file__', '__class__'}
STDLIB = set(getattr(sys, 'stdlib_module_names', ())) | set(sys.builtin_module_names)


def is_trivial(body):
    """pass / ... / a bare return / return of a constant or a name / raise: nothing to generate."""
    if not body:
        return True
    if len(body) > 1:
        return False
    stmt = body[0]
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    if isinstance(stmt, ast.Raise):
        return True
    if isinstance(stmt, ast.Return):
        v = stmt.value
        return v is None or isinstance(v, (ast.Constant, ast.Name)) or (isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name))
    return False


def bound_names(fn):
    """Parameters and every name the function binds (locals, loop and comprehension targets, imports, nested defs)."""
    out = set()
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            out.add(a.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out.add((alias.asname or alias.name).split('.')[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return out


def module_scope(tree):
    """Module-level definitions and where imported names come from."""
    defined, imported = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        defined.add(n.id)
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, ast.Import):
                for alias in sub.names:
                    imported[(alias.asname or alias.name).split('.')[0]] = (alias.name, 0)
            elif isinstance(sub, ast.ImportFrom):
                for alias in sub.names:
                    imported[alias.asname or alias.name] = (sub.module or '', sub.level)
            elif sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(sub.name)
    return defined, imported


def class_members(cls):
    members = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            members.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(t, ast.Name):
                    members.add(t.id)
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id in ('self', 'cls'):
            members.add(node.attr)
    return members


def dependency(fn, cls, defined, imported, project):
    """HumanEvo's levels: inter-class (other project code), intra-class (its own class only), standalone."""
    local = bound_names(fn)
    project_refs, class_refs = set(), set()
    members = class_members(cls) if cls is not None else set()
    self_name = None
    if cls is not None and fn.args.args:
        self_name = fn.args.args[0].arg
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
            if node.attr in members or not isinstance(node.ctx, ast.Store):
                class_refs.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            name = node.id
            if name in local or name in BUILTINS:
                continue
            if cls is not None and name == cls.name:
                class_refs.add(name)
            elif name in defined:
                project_refs.add(name)
            elif name in imported:
                module, level = imported[name]
                top = module.split('.')[0]
                if level > 0 or top in project:
                    project_refs.add(name)
    level = 'inter-class' if project_refs else 'intra-class' if class_refs else 'standalone'
    return level, sorted(project_refs), sorted(class_refs)


def describe(fn, cls, lines, defined, imported, project):
    first = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
    body = fn.body
    doc = ast.get_docstring(fn, clean=True)
    rest = body[1:] if doc is not None else body
    body_start = rest[0] if rest else None
    # The signature: from `def` to the colon that opens the body.
    head_end = body[0].lineno
    if head_end == fn.lineno:
        signature = lines[fn.lineno - 1][:body[0].col_offset].rstrip()
    else:
        signature = '\n'.join(lines[fn.lineno - 1:head_end - 1]).rstrip()
    level, project_refs, class_refs = dependency(fn, cls, defined, imported, project)
    return {
        'qualname': (cls.name + '.' if cls is not None else '') + fn.name,
        'name': fn.name,
        'cls': cls.name if cls is not None else None,
        'lines': [first, fn.end_lineno],
        'def_line': fn.lineno,
        'indent': fn.col_offset,
        'body_line': body_start.lineno if body_start is not None else 0,
        'body_col': body_start.col_offset if body_start is not None else 0,
        'doc_lines': [body[0].lineno, body[0].end_lineno] if doc is not None else None,
        'one_line': body[0].lineno == fn.lineno,
        'docstring': doc,
        'signature': signature,
        'trivial': is_trivial(rest),
        'is_constructor': fn.name in CONSTRUCTORS,
        'is_async': isinstance(fn, ast.AsyncFunctionDef),
        'dependency': level,
        'project_refs': project_refs,
        'class_refs': class_refs,
    }


def functions_of(source, project):
    tree = ast.parse(source)
    lines = source.split('\n')
    defined, imported = module_scope(tree)
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(describe(node, None, lines, defined, imported, project))
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append(describe(sub, node, lines, defined, imported, project))
    return out


def main():
    req = json.load(sys.stdin)
    project = set(req.get('project', []))
    result = {}
    for path, source in req['files'].items():
        try:
            result[path] = {'functions': functions_of(source, project)}
        except SyntaxError as e:
            result[path] = {'error': 'SyntaxError: %s (line %s)' % (e.msg, e.lineno)}
        except Exception as e:  # noqa: BLE001 - reported per file, the others still answer
            result[path] = {'error': '%s: %s' % (type(e).__name__, e)}
    json.dump(result, sys.stdout)


if __name__ == '__main__':
    main()
