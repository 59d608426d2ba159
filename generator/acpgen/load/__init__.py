"""Load: read what comes in and refuse what no later stage could build from.

``schema`` (a schema file, meta-validated), ``nesting`` and ``cycles`` (what would overflow or
loop), ``stability`` and ``inventory`` (the items and which are unstable), ``rule_table`` (the
capability rule table: its file and its shape). The unstable feature manifest is a concern of its
own (:mod:`acpgen.features`). Nothing is imported here: each module is loaded when it is used, so
that a command pays only for what it reads.
"""
