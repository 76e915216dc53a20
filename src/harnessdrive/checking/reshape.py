"""A correct solution written differently: the reference's Python change with its shape changed
and its meaning kept, so ``check`` can flag hidden tests that accept only the reference's shape.

Only the functions and methods the reference added or changed are reshaped; the rest of each
file stays byte for byte. Each one is rebuilt from its syntax tree (so its formatting is new and
its comments are gone) after these rewrites, each applied only where it cannot change what the
code does:

- **locals renamed**: names bound only by plain assignment in the function's own scope, when
  nothing reads the scope by name (``locals()``, ``vars()``, ``eval``, ``exec``, frames) and no
  class is defined inside;
- **a helper extracted**: ``return <expression>`` becomes a nested helper that returns the
  expression, called at once (not for expressions that yield, await, bind a name or call the
  argument-less ``super()``, which need the function's own frame);
- **branches swapped**: ``if t: A else: B`` becomes ``if not t: B else: A`` (``t`` is still
  tested once);
- **comparisons reordered**: ``x == 3`` becomes ``3 == x`` for ``==``, ``!=``, ``is`` and
  ``is not`` with a constant on one side (Python asks the other operand when the constant's
  type declines, so the result is the same).

The result must compile, or there is no rewrite. Other languages get none.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

_FRAME_READERS = frozenset({"locals", "vars", "eval", "exec", "dir", "_getframe", "currentframe"})
_FLIPPABLE: tuple[type[ast.cmpop], ...] = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_OWN_SCOPES = (*_SCOPES, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_Function = ast.FunctionDef | ast.AsyncFunctionDef
_LEVEL = "    "
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
"""Lines as the parser counts them (``str.splitlines`` also breaks at form feeds and more)."""


@dataclass(frozen=True)
class Reshaped:
    text: str
    """The file's new text."""
    changes: tuple[str, ...]
    """What was done, one line each (``parse_amount: renamed text to text_v``)."""


class NoReshape(ValueError):
    """Why a file's change cannot be reshaped."""


def reshape_module(base: str | None, new: str) -> Reshaped:
    """``new`` (the reference's version of a file; ``base`` is the file before it, None when the
    reference adds it) with every function the reference changed reshaped."""
    try:
        tree = ast.parse(new)
    except (SyntaxError, ValueError) as exc:
        raise NoReshape(f"the reference's version does not parse ({exc})") from None
    before = _definitions(ast.parse(base)) if base is not None else {}
    changed = [
        (name, node)
        for name, node in _definitions(tree).items()
        if name not in before or ast.dump(before[name]) != ast.dump(node)
    ]
    if not changed:
        raise NoReshape("the reference changes no function or method")
    taken = _identifiers(tree)
    lines = _LINES.findall(new)
    newline = "\r\n" if new.count("\r\n") * 2 > new.count("\n") else "\n"
    changes: list[str] = []
    # From the bottom up, so line numbers above stay right.
    for name, node in sorted(changed, key=lambda item: -_first_line(item[1])):
        start, end = _first_line(node), node.end_lineno or node.lineno
        indent = lines[start - 1][: node.col_offset]
        if indent.strip():  # something else shares the line: leave it
            continue
        if indent not in ("", _LEVEL):
            continue  # unparse indents by four spaces: another indent would not fit in
        reshaped, done = _reshape_function(node, taken)
        block = _render(reshaped, indent, newline)
        if block == "".join(lines[start - 1 : end]):
            continue
        lines[start - 1 : end] = [block]
        changes.append(f"{name}: {', '.join(done) or 'reformatted'}")
    result = "".join(lines)
    if not changes or result == new:
        raise NoReshape("no function the reference changes could be written differently")
    try:
        compile(result, "<reshaped>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise NoReshape(f"the reshaped file does not compile ({exc})") from None
    return Reshaped(result, tuple(reversed(changes)))


def _render(function: _Function, indent: str, newline: str) -> str:
    """The function's source at ``indent``. A method is rendered inside a class, so that
    unparse indents it: a docstring's own lines then keep their text exactly."""
    if indent:
        holder = _with_type_params(
            ast.ClassDef(name="_", bases=[], keywords=[], body=[function], decorator_list=[])
        )
        text = ast.unparse(ast.Module(body=[holder], type_ignores=[]))
        text = text.split("\n", 1)[1]
    else:
        text = ast.unparse(function)
    return "".join(line + newline for line in text.split("\n"))


def _definitions(tree: ast.Module) -> dict[str, _Function]:
    """Top-level functions and the methods of top-level classes, by dotted name."""
    found: dict[str, _Function] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


def _first_line(node: _Function) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _identifiers(tree: ast.AST) -> set[str]:
    """Every name the module spells, so a new name clashes with none of them."""
    found: set[str] = set()
    for node in ast.walk(tree):
        for field in ("id", "name", "arg", "attr", "asname"):
            value = getattr(node, field, None)
            if isinstance(value, str):
                found.add(value)
        if isinstance(node, ast.Global | ast.Nonlocal):
            found.update(node.names)
    return found


def _fresh(stem: str, taken: set[str]) -> str:
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}{n}", n + 1
    taken.add(name)
    return name


def _reshape_function(node: _Function, taken: set[str]) -> tuple[_Function, list[str]]:
    function = copy.deepcopy(node)
    done: list[str] = []
    renamed = _rename_locals(function, taken)
    if renamed:
        done.append("renamed " + ", ".join(f"{a} to {b}" for a, b in renamed.items()))
    helpers = _extract_returns(function, taken)
    if helpers:
        done.append(f"moved {helpers} returned expression(s) into a helper")
    swapped = _swap_branches(function)
    if swapped:
        done.append(f"swapped the branches of {swapped} if(s)")
    flipped = _flip_comparisons(function)
    if flipped:
        done.append(f"reordered {flipped} comparison(s)")
    ast.fix_missing_locations(function)
    return function, done


def _walk_own(nodes: list[ast.stmt]) -> Iterator[ast.AST]:
    """Nodes of the function's own scope: nested functions, classes and comprehensions aside."""
    stack: list[ast.AST] = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _OWN_SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _reads_frames(function: _Function) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in _FRAME_READERS:
            return True
        if isinstance(node, ast.Attribute) and node.attr in (*_FRAME_READERS, "f_locals"):
            return True
    return False


def _bound_otherwise(function: _Function) -> set[str]:
    """Names bound anywhere inside by something other than a plain name: parameters, imports,
    ``except ... as``, patterns, ``global``/``nonlocal``, nested definitions."""
    found: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            found.update(node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
    return found


def _rename_locals(function: _Function, taken: set[str]) -> dict[str, str]:
    if _reads_frames(function) or any(
        isinstance(n, ast.ClassDef) for n in ast.walk(function) if n is not function
    ):
        return {}
    stored = [
        node.id
        for node in _walk_own(function.body)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del)
    ]
    skip = _bound_otherwise(function)
    names = [n for n in dict.fromkeys(stored) if n not in skip and not n.startswith("__")]
    mapping = {name: _fresh(f"{name}_v", taken) for name in names}
    if not mapping:
        return {}
    # Every binding of these names inside is a plain name (the rest were left out above), and
    # the function's own binding makes each one local there: renaming every occurrence,
    # nested scopes included, keeps each reference pointing at the same variable.
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in mapping:
            node.id = mapping[node.id]
    return mapping


def _extractable(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant | ast.Name):
        return False  # nothing to extract
    for node in ast.walk(value):
        if isinstance(node, ast.Yield | ast.YieldFrom | ast.Await | ast.NamedExpr):
            return False
        if isinstance(node, ast.comprehension) and node.is_async:
            return False
        if isinstance(node, ast.Name) and node.id in ("super", "__class__", *_FRAME_READERS):
            return False
    return True


def _extract_returns(function: _Function, taken: set[str]) -> int:
    """Each ``return <expression>`` of the function's own body as a helper called at once."""
    if _reads_frames(function):
        return 0
    helper = ""
    count = 0
    own = [n for n in _walk_own(function.body) if not isinstance(n, _OWN_SCOPES)]
    for node in [function, *own]:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            at = 0
            while at < len(block):
                statement = block[at]
                value = statement.value if isinstance(statement, ast.Return) else None
                if value is None or not _extractable(value):
                    at += 1
                    continue
                helper = helper or _fresh("_result", taken)
                block[at : at + 1] = [
                    _helper(helper, value),
                    ast.Return(ast.Call(ast.Name(helper, ast.Load()), args=[], keywords=[])),
                ]
                count += 1
                at += 2
    return count


def _helper(name: str, value: ast.expr) -> ast.FunctionDef:
    """``def <name>(): return <value>``."""
    return _with_type_params(
        ast.FunctionDef(
            name=name,
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[ast.Return(value=value)],
            decorator_list=[],
            returns=None,
        )
    )


_Definition = TypeVar("_Definition", ast.FunctionDef, ast.ClassDef)


def _with_type_params(node: _Definition) -> _Definition:
    """The definition with the field Python 3.12 added (no type parameters), where it exists."""
    if "type_params" in type(node)._fields:
        setattr(node, "type_params", [])  # noqa: B010 (not in the stubs of older versions)
    return node


def _swap_branches(function: _Function) -> int:
    count = 0
    for node in ast.walk(function):
        if not isinstance(node, ast.If) or not node.orelse:
            continue
        test = node.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            node.test = test.operand
        else:
            node.test = ast.UnaryOp(op=ast.Not(), operand=test)
        node.body, node.orelse = node.orelse, node.body
        count += 1
    return count


def _flip_comparisons(function: _Function) -> int:
    count = 0
    for node in ast.walk(function):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        if not isinstance(node.ops[0], _FLIPPABLE):
            continue
        left, right = node.left, node.comparators[0]
        if isinstance(left, ast.Constant) == isinstance(right, ast.Constant):
            continue
        node.left, node.comparators = right, [left]
        count += 1
    return count
