"""The tools of a generated package: the conformance kit, the trace viewer and the relay
command. They run from acpgen (``acpgen conformance``, ``acpgen trace show``, ``acpgen
relay``); a vendored copy holds them only when asked (``acpgen vendor --with ...``)."""
