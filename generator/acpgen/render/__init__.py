"""Render: the IR in, ``{path: text}`` out, with no side effect (``package.render``).

``models`` (datamodel-code-generator on the input ``prepare`` derives from the IR, keyed by
``model_keys``), ``stubs``, ``builders``, ``error_codes`` and ``expressions`` (template data for
``templates/package/``, rendered by ``templating``), ``header`` and ``formatting`` (the pinned
ruff). Nothing is imported here: each module is loaded when it is used.
"""
