"""How generated code marks an unstable item: its docstring starts with :data:`UNSTABLE_NOTE`."""

from __future__ import annotations

from acpgen import ir

UNSTABLE_NOTE = f"{ir.UNSTABLE_MARKER}: not part of the stable protocol; it may change or be removed at any time."
"""What the generated code writes in the docstring of every unstable item (unless the schema's
description holds :data:`acpgen.ir.UNSTABLE_MARKER` already, where the renderer checks it)."""
