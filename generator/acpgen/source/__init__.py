"""Where the schema comes from: settings, protocol versions, the npm fetch and its lock."""
