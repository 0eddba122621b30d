"""Rescind services: the graph, the belief engine, replay, benchmarks and the CLI."""
