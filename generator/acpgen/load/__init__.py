"""Load: read what comes in and refuse what no later stage could build from.

``schema`` (a schema file, meta-validated), ``nesting`` and ``cycles`` (what would overflow or
loop), ``stability`` and ``inventory`` (the items and which are unstable), ``rule_table`` (the
capability rule table's shape), and the unstable feature manifest (``feature_manifest``,
``feature_check``, ``feature_dependencies``, ``feature_items``, ``features``) with the schema of a
selection of features (``feature_selection``). Nothing is imported here: each module is loaded
when it is used, so that a command pays only for what it reads.
"""
