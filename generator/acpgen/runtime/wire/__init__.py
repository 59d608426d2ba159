"""What a message is: JSON-RPC basics (``rpc``), the codec (``codec``: bytes to JSON and
back), reading a message (``messages``: the one place that makes sense of a message's
bytes, and the glances routing needs), the models' reading rules (``model_rules``) and
message unions read by method (``message_unions``). Imports nothing else of the
runtime."""
