#!/usr/bin/env bash
# Static checks, each one failing the run: lint, formatting, and strict typing of the package.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy bench
