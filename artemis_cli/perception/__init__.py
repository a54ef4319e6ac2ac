"""Perception: UI XML parsing, element indexing, hit testing, dHash, action markers."""
