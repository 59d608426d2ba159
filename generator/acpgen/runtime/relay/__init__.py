"""The relay (``docs/relay.md``): any stdio ACP agent served over the network, one agent
process per remote connection. The app (``app``) is the remote server's with agents
that are processes, each carried byte for byte over its connection (``pipe``); the
command that runs it under uvicorn is a tool (``tools.relay_command``: ``acpgen
relay``). Imports ``remote``, ``resume``, ``connection`` and ``wire``."""
