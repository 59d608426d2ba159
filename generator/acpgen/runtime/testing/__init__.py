"""Testing an agent or a client in process: a connected pair over the real connection
and codec, a client that records what it is sent, and the turns it records."""
