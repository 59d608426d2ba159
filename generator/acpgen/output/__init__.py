"""Output: rendered packages written and compared (``folders``), through one crash-safe writer
(``atomic_write``), and runs that would change nothing skipped (``freshness``)."""
