"""Artemis: a runner for LLM agents that operate Android phones."""

__version__ = "0.1.0"
