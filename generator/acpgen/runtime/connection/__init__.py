"""A conversation with one peer: the connection (``connection``) over any transport
(``transport``; ``lines``: the one line splitter and the stdio transport), which reads
(``reader``), writes (``writer``) and keeps its messages in flight (``in_flight``)
within its limits (``limits``); the dispatcher (``dispatch``) and the answers it makes
(``replies``), the senders' base (``senders``), the validators and serializers both
share (``adapters``), capability checks (``capabilities``), version negotiation
(``initialization``), the trace writer (``trace_writer``), starting a peer process
(``process``), connecting a handler to its peer in one call (``serve``) and the event
loop a program runs on (``event_loop``). Each module is named after the public module it
serves, where it serves one. Imports ``wire``."""
