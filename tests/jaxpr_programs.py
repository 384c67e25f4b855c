"""The same small program staged by laminax and by real JAX, for comparing their jaxprs.

A program is source text that defines `g` using `lax`, `np` and transformation names (`grad`,
`vmap`, ...), which are bound to laminax's or to JAX's. `ProgramSuite` runs every program of a
table once in the JAX environment (one subprocess call) and each one in laminax on demand;
both give the printed jaxpr, its equation count, its output avals and the output values.
"""

import re

import laminax_core as lc
import numpy as np
import pytest
from jaxref import run_jax
from laminax_core import lax
from laminax_pytree import tree_leaves

__all__ = ["ProgramSuite", "normalize"]

_JAX_SNIPPET = """
import jax
ns_base = dict(lax=jax.lax, np=np, **{n: getattr(jax, n) for n in names}, **extra)
result = []
for src, args in cases:
    ns = dict(ns_base)
    try:
        exec(src, ns)
        g = ns["g"]
        closed = jax.make_jaxpr(g)(*args)
        out = [np.asarray(v) for v in jax.tree_util.tree_leaves(g(*args))]
    except Exception as err:  # reported per program by the tests
        result.append(dict(error=f"{type(err).__name__}: {err}"))
        continue
    result.append(dict(text=str(closed), n_eqns=len(closed.eqns),
                       avals=[a.str_short(short_dtypes=True) for a in closed.out_avals], out=out))
"""


def normalize(text: str) -> str:
    """JAX's printed jaxpr with `np.int64(1)` params as `1`: the value is what counts."""
    return re.sub(r"np\.int64\((-?\d+)\)", r"\1", text)


class ProgramSuite:
    """A table of `(name, source, args, exact)` programs run under both libraries.

    Args:
      cases: the programs.
      names: the transformation names the programs use (attributes of `laminax_core` and of
        `jax` alike).
      extra: further globals (plain data) for every program.
    """

    def __init__(self, cases, names, extra=None):
        self.cases = cases
        self.names = tuple(names)
        self.extra = dict(extra or {})
        self._jax: dict = {}

    def laminax(self, src, args) -> dict:
        """Stages and runs one program with laminax."""
        ns = dict(lax=lax, np=np, **{n: getattr(lc, n) for n in self.names}, **self.extra)
        exec(src, ns)
        g = ns["g"]
        closed = lc.make_jaxpr(g)(*args)
        out = [np.asarray(v) for v in tree_leaves(g(*args))]
        return dict(
            text=str(closed),
            n_eqns=len(closed.eqns),
            avals=[a.str_short() for a in closed.out_avals],
            out=out,
        )

    def jax(self, name) -> dict:
        """JAX's result for the program `name` (the whole table runs on the first call)."""
        if not self._jax:
            found = run_jax(
                _JAX_SNIPPET,
                cases=[(src, args) for _, src, args, _ in self.cases],
                names=list(self.names),
                extra=self.extra,
            )
            self._jax.update(zip([c[0] for c in self.cases], found, strict=True))
        result = self._jax[name]
        if "error" in result:
            pytest.fail(f"the program fails under JAX: {result['error']}")
        return result
