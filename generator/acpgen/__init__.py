"""acpgen: generate typed Python bindings for the Agent Client Protocol."""
