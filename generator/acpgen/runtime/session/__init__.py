"""A session's state: its updates and calls folded by the schema's rules (``fold``),
read back as models (``readings``: the base of ``session_state.SessionState``); for
agents, trackers that send only what changed (``tracker``); for clients, permission
policies (``permissions``). Imports ``wire``."""
