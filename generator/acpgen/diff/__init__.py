"""The spec diff: what changed between two ACP schema revisions, and whom it breaks.

Data flow: :mod:`~acpgen.diff.sources` loads each side into a
:class:`~acpgen.diff.snapshot.Snapshot` (every item with its stability, node and writers);
:mod:`~acpgen.diff.compare` classifies each change by a rule of :mod:`~acpgen.diff.catalogue`
after normalising representation churn (:mod:`~acpgen.diff.alignment`, with shapes compared by
:mod:`~acpgen.diff.relations`); :mod:`~acpgen.diff.capability_rules` compares the capability rule
tables;
:mod:`~acpgen.diff.report` renders the findings as text, Markdown or JSON.
"""
