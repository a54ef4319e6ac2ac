"""``artemis mcp``: an MCP server whose every action is a recorded, verified, replayable step."""
