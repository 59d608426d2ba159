"""The views of a trace (the file of JSON lines that ``trace=`` or ``ACP_TRACE``
writes): the text view (``text_view``), the HTML view (``html_view``) and the ``trace
show`` command (``show``). Imports ``session``."""
