"""Models: gemini (google-genai), heuristic (offline baseline), scripted (plays a list)."""
