"""Effects on equations and jaxprs, with a user-defined effectful primitive."""

import numpy as np
from laminax_core import Effect, Primitive, make_jaxpr, vmap
from laminax_core.internal import dce_jaxpr, ordered_effects


class LogEffect(Effect):
    pass


ordered_effects.add_type(LogEffect)
LOG = []

log_p = Primitive("log_value")
log_p.multiple_results = True
log_p.def_impl(lambda x: LOG.append(np.asarray(x)) or [])
log_p.def_effectful_abstract_eval(lambda aval: ([], {LogEffect()}))
log_p.def_batch(lambda axis_data, args, dims: (log_p.bind(*args), []))


def test_effects_are_recorded_on_equations_and_jaxprs():
    closed = make_jaxpr(lambda x: (log_p.bind(x), x * 2.0)[1])(np.float32(1))
    assert closed.eqns[0].effects == {LogEffect()}
    assert closed.effects == {LogEffect()}
    assert ordered_effects.contains(next(iter(closed.effects)))
    assert "log_value a" in str(closed)


def test_dce_keeps_effectful_equations():
    closed = make_jaxpr(lambda x: (log_p.bind(x), x * 2.0)[1])(np.float32(1))
    pruned, _ = dce_jaxpr(closed.jaxpr, [False])
    assert [e.primitive.name for e in pruned.eqns] == ["log_value"]


def test_effectful_primitive_runs_eagerly_and_under_vmap():
    LOG.clear()
    log_p.bind(np.float32(3))
    vmap(lambda x: log_p.bind(x) or x)(np.arange(2, dtype=np.float32))
    assert len(LOG) == 2


def test_effect_equality():
    assert LogEffect() == LogEffect() and hash(LogEffect()) == hash(LogEffect())
    assert LogEffect() != Effect()
