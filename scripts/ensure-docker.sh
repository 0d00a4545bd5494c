#!/usr/bin/env bash
# Make a Docker engine answer on this machine; safe to run any number of times.
#   1. install what is missing from Debian: docker.io (the engine), and what the image recipes use:
#      debootstrap (base image), busybox-static (tiny image), npm (fetches the agent CLI);
#   2. start dockerd when no engine answers;
#   3. wait (up to DOCKER_WAIT_SECONDS, default 60) until `docker info` answers.
set -euo pipefail

engine_answers() { docker info >/dev/null 2>&1; }

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
[ -x /bin/busybox ] || missing+=(busybox-static)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "ensure-docker: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! engine_answers; then
    echo "ensure-docker: no engine answers; starting dockerd (log: /var/log/dockerd.log)" >&2
    # Its own session: the engine must outlive the shell (or test run) that happened to start it.
    setsid nohup dockerd >>/var/log/dockerd.log 2>&1 </dev/null &
    deadline=$(( $(date +%s) + ${DOCKER_WAIT_SECONDS:-60} ))
    until engine_answers; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "ensure-docker: dockerd did not answer within ${DOCKER_WAIT_SECONDS:-60}s; see /var/log/dockerd.log" >&2
            tail -20 /var/log/dockerd.log >&2 || true
            exit 1
        fi
        sleep 0.5
    done
fi
docker version --format 'ensure-docker: engine {{.Server.Version}} answers' >&2
