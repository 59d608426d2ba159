"""ACP over the network (``docs/remote.md``): the ASGI app (``app``: checks, the
registry of connections, the reaper) with its two profiles (``http_profile``,
``websocket_profile``) over ASGI helpers (``asgi``) and what it keeps per connection
(``server_connection``); the client's transports (``http_client``, over the requests of
``http_requests``; ``websocket_client``), named in one registry (``transports``), and
connecting a client over them (``connect``); the ``remote`` extra they need (``deps``),
typed in ``http_library`` and ``websocket_library``; the refusal both profiles raise
(``refusal``). Imports ``wire``, ``connection`` and ``resume``."""
