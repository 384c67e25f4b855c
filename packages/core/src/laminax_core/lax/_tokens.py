"""Tokens: `create_token` (a token with no preconditions) and `after_all` (a token after all
the given ones), which order effects inside a program. Their values carry nothing: eagerly
they are `Token` objects; lowered, `stablehlo.create_token` / `stablehlo.after_all`."""

from __future__ import annotations

from laminax_core._avals import AbstractToken, Token, abstract_token
from laminax_core._primitive import NO_OPERANDS, NOT_LINEAR, ZERO_TANGENT, define_primitive

__all__ = ["after_all", "create_token"]
# the primitives, which lax exports beside their functions
__all__ += [
    "after_all_p", "create_token_p",
]  # fmt: skip


def create_token(_=None):
    """A token with no preconditions (the argument is ignored, as in JAX).

    Example:
      >>> create_token()
      Token()
    """
    return create_token_p.bind()


create_token_p = define_primitive(
    "create_token",
    abstract_eval=lambda: abstract_token,
    reference=lambda: Token(),
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=NO_OPERANDS,
)
create_token_p.def_impl(Token)  # eagerly a token is a plain object: nothing to compute


def after_all(*operands):
    """A token that comes after all the given tokens.

    Example:
      >>> after_all(create_token(), create_token())
      Token()
    """
    return after_all_p.bind(*operands)


def _after_all_abstract_eval(*avals):
    if any(not isinstance(a, AbstractToken) for a in avals):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


def _after_all_batch(axis_data, args, dims):
    return after_all_p.bind(*args), None


after_all_p = define_primitive(
    "after_all",
    abstract_eval=_after_all_abstract_eval,
    reference=lambda *tokens: Token(),
    jvp=ZERO_TANGENT,
    transpose=NOT_LINEAR,
    batch=_after_all_batch,
)
after_all_p.def_impl(lambda *tokens: (_after_all_abstract_eval(*map(_aval, tokens)), Token())[1])


def _aval(x):
    return abstract_token if isinstance(x, Token) else None
