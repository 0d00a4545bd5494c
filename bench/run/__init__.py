"""The suite run: a suite manifest planned as store stages, from a git commit to a verified publication."""
