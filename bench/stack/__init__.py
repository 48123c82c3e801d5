"""Benchmarks of the local stack's own parts: ``broker_start`` (a Kafka broker's start
with and without the class data sharing archive)."""
