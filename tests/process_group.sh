# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
# Sourced by the shell tests: the shell side of tests/child_process.h. A server a test starts in the background
# runs under `setsid`; in a non-interactive script a background job is not a process group leader, so setsid
# makes it one without forking: $! is the server's pid and the id of its process group (and session). stop_group
# then ends the whole group, so whatever the server started (runuser's child, a worker) goes with it.
#
#   setsid SERVER ARGS... > out 2> err &
#   pids+=($!)
#   ...
#   stop_group "${pids[@]}"      # in the EXIT trap

# stop_group PID...: for each PID (a process group leader started as above; empty words are skipped): SIGTERM to its
# group, up to 5 s for PID to exit, then SIGKILL to whatever is left of the group, then PID reaped.
stop_group() {
  local pid _
  for pid in "$@"; do
    [ -n "$pid" ] || continue
    if kill -TERM -- "-$pid" 2> /dev/null; then
      for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
      kill -KILL -- "-$pid" 2> /dev/null || true
    fi
    wait "$pid" 2> /dev/null || true
  done
}
