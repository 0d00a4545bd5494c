"""OpenAI's Codex CLI as a harness: its image, configuration files, command lines, rollout files and tools."""
