"""Unstable features: the curated manifest that assigns every unstable item of a schema to one
named feature, and builds of a selection of them.

``manifest`` (the file and its JSON Schema, ``manifest.schema.json``), ``model`` (the checked
``Manifest`` and its ``Feature``\\ s), ``check`` (the manifest against the schema: every unstable
item owned once, names that exist), ``items`` (what an item key names in the schema),
``dependencies`` (what a feature needs of another), ``selection`` (a selection resolved, and the
schema a build of it starts from). Nothing is imported here: each module is loaded when it is used.
"""
