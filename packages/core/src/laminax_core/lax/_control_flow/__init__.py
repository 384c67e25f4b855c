"""Structured control flow: cond, switch, while_loop, fori_loop, scan, map; and composite (a
named decomposition). Each higher-order primitive has its own module with every rule."""

from laminax_core.lax._control_flow.common import empty2_p as empty2_p
from laminax_core.lax._control_flow.composite import composite as composite
from laminax_core.lax._control_flow.composite import composite_p as composite_p
from laminax_core.lax._control_flow.cond import cond as cond
from laminax_core.lax._control_flow.cond import cond_p as cond_p
from laminax_core.lax._control_flow.cond import switch as switch
from laminax_core.lax._control_flow.scan import map as map
from laminax_core.lax._control_flow.scan import scan as scan
from laminax_core.lax._control_flow.scan import scan_p as scan_p
from laminax_core.lax._control_flow.while_loop import fori_loop as fori_loop
from laminax_core.lax._control_flow.while_loop import while_loop as while_loop
from laminax_core.lax._control_flow.while_loop import while_p as while_p

__all__ = [
    "composite", "composite_p", "cond", "cond_p", "empty2_p", "fori_loop", "map", "scan", "scan_p", "switch", "while_loop",
    "while_p",
]  # fmt: skip
