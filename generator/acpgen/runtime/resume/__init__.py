"""Sessions that outlive their connection (``docs/resume.md``): the extension's
vocabulary (``vocabulary``), the event log of what an agent sent (``event_log``), the
host that keeps an agent's connection across its client's transports (``host``), the
client's transport that reconnects and resumes (``client``), and an agent served on
stdio, resumable when asked (``stdio``). Imports ``wire`` and ``connection``."""
