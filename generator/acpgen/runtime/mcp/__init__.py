"""MCP servers for agents: connect to the stdio MCP servers a client names in a
session, list and call their tools (standard library only)."""
