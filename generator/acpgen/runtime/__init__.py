"""The runtime: protocol-independent support code that every generated package carries.

Ordinary Python, linted, type-checked and unit-tested in acpgen's repository, and copied
verbatim (behind the generated-file header) into each generated package's ``_runtime``
folder. It imports only the standard library, pydantic and its own modules (the remote
client also the ``remote`` extra), never a generated module: what comes from the schema
(the method table, the models, the routing and coalescing rules, the protocol version)
is handed to it by the package's public modules, which are rendered from templates and
show the runtime's public objects as their own.

Its sub-packages are layers; each imports only those before it (a contract checked in
acpgen's repository):

- ``wire``: JSON-RPC basics, the codec, reading a message, the models' reading rules;
- ``connection``: the connection and its transports (the line splitter, stdio), the
  in-flight bookkeeping, the dispatcher, the senders' base, capability checks, version
  negotiation, the trace writer, process spawning, one-call connecting;
- ``session``: a session's updates folded into its state, read as models; trackers and
  permission policies;
- ``trace``: the views of a trace (text, HTML) and the ``trace show`` command;
- ``resume``: sessions that outlive their connection (the event log, the extension's
  vocabulary, the host and the client; an agent on stdio, resumable when asked);
- ``remote``: ACP over the network (the ASGI app with its two profiles, the client
  transports and connecting over them, refusals).

``front_door`` is the package's front door; ``surface`` has the public modules
present the runtime's objects as their own.
"""
