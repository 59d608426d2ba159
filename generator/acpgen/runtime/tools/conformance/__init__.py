"""The conformance kit: drive a peer through scenarios, judge what it writes against
the package's requirements (handed in by the generated ``conformance`` module),
report."""
