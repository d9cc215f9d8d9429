# examples/distributed: IR node types defined in Python (py_class), shipped to Dask workers.
"""A small expression IR whose node types are defined in Python (``py_class``) with an operator
enum defined in Python. The workers import this module when they unpickle a tree (a pickled
instance names the modules that define its types), so it must be importable there: a
``LocalCluster`` gives its workers the client's ``sys.path``, which holds this directory.
"""

from __future__ import annotations

import packedfun
from packedfun.dataclasses import Enum, auto, py_class
from packedfun.structural import structural_mutate


class Op(Enum, type_key="example.Op"):
    ADD = auto()
    MUL = auto()


@py_class("example.Expr")
class Expr(packedfun.Object):
    pass


@py_class("example.Const", eq=True)
class Const(Expr):
    value: float


@py_class("example.Var", eq=True)
class Var(Expr):
    name: str


@py_class("example.BinOp", eq=True)
class BinOp(Expr):
    op: Op
    lhs: Expr
    rhs: Expr


def evaluate(expr: Expr, env: dict) -> float:
    """Runs on a worker: the value of ``expr`` with the variables of ``env``."""
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Var):
        return float(env[expr.name])
    lhs, rhs = evaluate(expr.lhs, env), evaluate(expr.rhs, env)
    return lhs + rhs if expr.op is Op.ADD else lhs * rhs


def bind(expr: Expr, env: dict) -> Expr:
    """Runs on a worker: ``expr`` with the variables of ``env`` replaced by constants (the
    subtrees without variables are shared, not copied)."""
    return structural_mutate(
        expr, lambda e: Const(float(env[e.name])) if isinstance(e, Var) and e.name in env else e
    )
