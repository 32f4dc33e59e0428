#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sdrun as Docker's default runtime ("default-runtime": "sdrun" in daemon.json, issue 12): a plain
# `docker run` without --runtime runs on sdrun, in a docker-<id>.scope, and nothing is left after rm.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib-docker.sh"

require_root
require_systemd
[ "$DOCKER_TEST_DEFAULT" = 1 ] && [ "$DOCKER_TEST_RUNTIME" = sdrun ] || bail "run with DOCKER_TEST_DEFAULT=1 DOCKER_TEST_RUNTIME=sdrun"
docker_setup
I=$DOCKER_IMAGE

is "$(dk info --format '{{.DefaultRuntime}}')" sdrun "docker info: the default runtime is sdrun"
is "$(dk run --rm --network none "$I" echo hello 2>&1)" hello "docker run (no --runtime): echo hello"
rc=0; dk run --rm --network none "$I" sh -c 'exit 42' >/dev/null 2>&1 || rc=$?
is "$rc" 42 "docker run: the exit status (42)"
id=$(dk run -d --network none "$I" sleep 1000)
cleanup_add "$DOCKER" rm -f "$id"
is "$(docker_runtime_of "$id")" sdrun "inspect: HostConfig.Runtime is sdrun"
is "$("$SDRUN" --root /run/docker/runtime-runc/moby state "$id" | jq -r .status)" running "sdrun's state of it: running"
ok_desc "the container's init is in docker-ID.scope" docker_scope_ok "$id"
is "$(dk exec "$id" echo from-exec 2>&1)" from-exec "exec"
ok_desc "stop -t 1" dk stop -t 1 "$id"
ok_desc "rm" dk rm "$id"
ok_desc "nothing left after rm" wait_for docker_gone "$id"

done_testing
