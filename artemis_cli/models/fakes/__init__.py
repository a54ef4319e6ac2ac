"""Fake model servers for tests and benchmarks: the Gemini REST API and an OpenAI-compatible
endpoint (vLLM, llama.cpp, Ollama imitations) on 127.0.0.1, driven by the real SDKs. At least as
hostile as the real services (faults, windows, signatures); never used by a run against a real
provider."""
