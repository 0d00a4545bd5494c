"""What a container looks like from inside: the user, the workspace path, the hostname, the base environment.

These values are the same for every container the runner starts (prebuild, both arms, verifier, calibration), so
nothing an agent can see differs between arms, and none of them names the harness, a condition or an experiment.
"""

from __future__ import annotations

__all__ = [
    "ASSET_DIR",
    "BASE_ENV",
    "GATEWAY_ALIAS",
    "HOSTNAME",
    "RELAY_PORT",
    "RUNNER_SCRATCH",
    "USER",
    "USER_GID",
    "USER_HOME",
    "USER_NAME",
    "USER_UID",
    "WORKSPACE",
    "WORKSPACE_MTIME",
]

USER_NAME = "dev"
USER_UID = 1000
USER_GID = 1000
USER_HOME = "/home/dev"
WORKSPACE = "/workspace"
# The time every file a container's workspace holds is dated (2024-01-02 09:30 UTC), in every container alike: the
# same in both arms, the prebuild's and the verifier's (so the bytecode compiled at prebuild stays valid against
# it), and never the 1970 epoch, which tells files were unpacked for the occasion rather than worked on.
WORKSPACE_MTIME = 1_704_187_800
HOSTNAME = "devbox"
USER = f"{USER_UID}:{USER_GID}"
# Where a runner-owned script (verifier, oracle) is mounted read-only, only ever in containers the agent is not in.
ASSET_DIR = "/mnt/task"
# Prefixes of the runner's own scratch directories on the host (verifier staging, a gateway's policy, a pair's
# fixture, publication, an arm's configuration files): a path under one of them in a published file is a
# runner-owned path (bench.publish.checks).
RUNNER_SCRATCH = {
    "verifier": "task-",
    "gateway": "gw-",
    "fixture": "fx-",
    "publication": "publish-",
    "staging": "h-",
}
# The name the model gateway answers to on a model-only network.
GATEWAY_ALIAS = "api"
# The port it answers on there (a relay to the runner's gateway, see bench.sandbox.backends.docker.network).
RELAY_PORT = 8080

# The environment every container starts from; an arm may add only its declared memory attachment.
BASE_ENV: dict[str, str] = {
    "HOME": USER_HOME,
    "LANG": "C.UTF-8",
    "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
    "USER": USER_NAME,
}
