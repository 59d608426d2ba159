"""A conversation with one peer: the connection (``connection``) over any transport
(``transport``; ``lines``: the one line splitter and the stdio transport), its limits
(``limits``), its messages in flight (``in_flight``), the dispatcher (``dispatcher``),
the senders' base (``sender``), capability checks (``capabilities``), version
negotiation (``negotiation``), the trace writer (``trace_writer``), and starting a peer
process (``process``). Imports ``wire``."""
