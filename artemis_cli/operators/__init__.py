"""Operator loops (Flash; Pro in a later issue) and the tools they offer the model."""
