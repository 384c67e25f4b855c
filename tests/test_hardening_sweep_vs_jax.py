"""Issue 12's sweep: a few hundred more bad or unusual inputs per area, run under laminax and
real JAX (tables in `hardening_sweep_tables.py`). Every expression must give JAX's value (and
dtype) or JAX's error type; the few JAX answers by accident are listed there, with why.

Classes fixed by this sweep (each a table here): eager `convert_element_type` of a 0-d value
gave a NumPy array (now an Array, as JAX; folded to a literal only under a trace); shape
mismatches of two same-rank operands are TypeError and of different ranks ValueError (JAX's
split); duplicated axes in softmax/log_softmax/logsumexp were deduplicated silently;
`jnp.split` at decreasing or out-of-range indices gave NumPy's empty pieces; `einsum` with a
repeated label of two sizes took a wrong diagonal; `fold_in` wrapped Python ints outside
uint32; `scan(unroll=-1)` ran; integer `power` used all exponent bits (JAX: the low 6);
`x.at[i].divide` kept integer dtypes and `.power` refused booleans; `digitize` with decreasing
bins counted from the wrong side; `geomspace` through zero or across signs gave zeros (JAX:
NaN); non-integer indices were IndexError (JAX: TypeError; `take`: ValueError); `sort(kind=)`,
`searchsorted(method='foo')` and `round(decimals=1.5)` were accepted silently; valid programs
that failed: `median`/`quantile` over several axes, `reshape` to a 0-d integer array shape,
`astype(None)`, `cumsum(dtype=bool)`, `lax.map(batch_size=0)`, a list pair from a has_aux
function, `dot_general` with bare-int dimensions, `tensordot(axes=-1)`, `matrix_rank` of a
vector; error types of conv/pad/dot_general/linalg shape checks, `arange(dtype=bool)`, and
shard_map's `out_specs=None` (a ValueError, not a crash in laminax's spec reading). And a
missing feature: `jnp.unique(axis=...)` (unique slices) raised NotImplementedError. lax is
strict as JAX's: reductions and cumulative ops refuse negative or bare-int axes (jnp reads
them), squeeze/expand_dims refuse repeated dimensions, and broadcast_in_dim takes unordered
dimensions (a transpose).
"""

import pytest
from hardening_sweep_tables import JAX_ACCIDENTS
from hardening_table import check_table
from jaxref import requires_jax

import hardening_sweep_tables as tables

pytestmark = [requires_jax, pytest.mark.filterwarnings("ignore")]


def _run(name: str, min_ok: int, min_error: int):
    setup, exprs = getattr(tables, name)()
    left_out = JAX_ACCIDENTS.get(name, set())
    assert left_out <= set(exprs), sorted(left_out - set(exprs))  # the list stays current
    counts = check_table([e for e in exprs if e not in left_out], setup)
    assert counts["ok"] >= min_ok and counts["error"] >= min_error, counts


def test_axis_arguments_as_jax():
    _run("axes", 100, 200)


def test_shapes_dtypes_random_and_control_flow_as_jax():
    _run("shapes_dtypes_control", 60, 100)


def test_slicing_padding_sorting_linalg_and_nn_as_jax():
    _run("slicing_linalg_misc", 45, 80)


def test_binary_operands_that_do_not_broadcast_as_jax():
    _run("broadcast", 0, 150)


def test_functions_of_operands_that_do_not_broadcast_as_jax():
    _run("broadcast_functions", 15, 60)


def test_at_divide_and_power_as_jax():
    _run("at_divide_power", 300, 20)


def test_integer_and_boolean_power_as_jax():
    _run("int_power", 100, 5)


def test_index_types_as_jax():
    _run("index_types", 5, 90)


def test_linalg_shape_checks_as_jax():
    _run("linalg_shapes", 50, 70)


def test_shard_map_specs_as_jax():
    _run("shard_map_specs", 5, 60)


def test_unique_along_an_axis_as_jax():
    _run("unique_axis", 120, 5)


def test_lax_structural_and_reduction_arguments_as_jax():
    _run("lax_structural", 40, 60)
