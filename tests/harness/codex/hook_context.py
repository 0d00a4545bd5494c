"""A hook for the real-CLI test: adds ``CONTEXT-<event>-<tool>`` to the model's context, as a memory hook would."""

import json
import sys

event = json.load(sys.stdin)
name = event.get("hook_event_name", "")
context = f"CONTEXT-{name}-{event.get('tool_name', '')}"
print(json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}))
