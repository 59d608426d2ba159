"""A conversation with one peer: the connection (``connection``) over any transport
(``transport``; ``lines``: the one line splitter and the stdio transport), its limits
(``limits``), its messages in flight (``in_flight``), the dispatcher (``dispatcher``),
the senders' base (``sender``), the validators and serializers both share
(``adapters``), capability checks (``capabilities``), version negotiation
(``negotiation``), the trace writer (``trace_writer``), starting a peer process
(``process``), connecting a handler to its peer in one call (``peers``) and the event
loop a program runs on (``event_loop``). Imports ``wire``."""
