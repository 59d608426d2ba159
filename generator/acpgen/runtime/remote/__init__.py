"""ACP over the network (``docs/remote.md``): the ASGI app (``app``: checks, the
registry of connections, the reaper) with its two profiles (``http_profile``,
``websocket_profile``) over ASGI helpers (``asgi``) and what it keeps per connection
(``server_connection``); the client's transports (``http_client``, ``websocket_client``:
the ``remote`` extra, ``deps``) and connecting a client over them (``connect``); the
refusal both profiles raise (``refusal``). Imports ``wire``, ``connection`` and
``resume``."""
