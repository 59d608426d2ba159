"""Output: the one step that ends ``generate`` and ``vendor`` (``check_or_write``), rendered
packages written and compared (``folders``), through one crash-safe writer (``atomic_write``),
runs that would change nothing skipped (``freshness``), and only folders acpgen wrote replaced
(``ownership``)."""
