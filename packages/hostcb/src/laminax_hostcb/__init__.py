"""laminax hostcb: host callbacks from compiled code: the seed's id_tap/id_print/call and today's callbacks."""

__all__: list[str] = []
