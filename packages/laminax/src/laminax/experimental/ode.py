"""`laminax.experimental.ode`: JAX's `odeint` (adaptive Dormand-Prince integration with an
adjoint-method gradient), implemented in `laminax_core.ode`."""

from laminax_core.ode import odeint

__all__ = ["odeint"]
