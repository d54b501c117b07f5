# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
# shellcheck shell=bash
# Sourced by the /metrics tests (tests/metrics_promtool_test.sh, tests/fleet_metrics_promtool_test.sh): the frame
# they share. Each publishes a small list, starts the servers it needs for real on 127.0.0.1, makes requests, and
# passes each /metrics through `promtool check metrics` (Debian: prometheus): text-format parsing plus promtool's
# naming, HELP/TYPE and unit lint. What differs between them (which servers, which series must exist) stays in
# the test.
#
#   . "$(dirname "$0")/promtool_frame.sh"
#   promtool_frame_begin NAME BIN_DIR [TOOL...]   # skip (77) unless promtool and each TOOL are installed
#   publish_phishing 'evil.example\n...'          # keys/ and the list "phishing" in repo/
#   start_reference_server [ARG...]               # urlguard-server --repo repo --listen 127.0.0.1:0 ARG...; $server
#   check_metrics NAME URL [WANT...]              # sets failed=1 on a problem
#   exit $failed

. "$(dirname "${BASH_SOURCE[0]}")/process_group.sh"  # setsid + stop_group: each server stopped with its process group

# promtool_frame_begin NAME BIN_DIR [TOOL...]: exits 77 (CTest's SKIP_RETURN_CODE) when promtool or a TOOL is
# missing; else sets $bin, makes a scratch directory under $URLGUARD_TEST_TMPDIR, cd's into it, and arranges for
# every process group in $pids to be stopped and the directory removed on exit.
promtool_frame_begin() {
  local name=$1 tool
  bin=$2
  shift 2
  for tool in promtool "$@"; do
    command -v "$tool" > /dev/null || {
      echo "SKIPPED: $tool is not installed (scripts/install-deps.sh installs it; promtool: Debian's prometheus)"
      exit 77
    }
  done
  local base=${URLGUARD_TEST_TMPDIR:-/tmp}
  mkdir -p "$base"
  work=$(mktemp -d "$base/$name.XXXXXX")
  pids=()
  failed=0
  trap 'stop_group "${pids[@]}"; rm -rf "$work"' EXIT
  cd "$work" || exit 1
}

# publish_phishing FEED: a new signing key in keys/ and the list "phishing" published from FEED (printf format:
# entries separated by \n) into repo/.
publish_phishing() {
  "$bin/urlguard-publish" keygen --out keys > /dev/null
  printf '%b' "$1" > feed.txt
  "$bin/urlguard-publish" publish --repo repo --key keys/urlguard-ed25519.pem --list phishing --input feed.txt \
      > /dev/null
}

# start_reference_server [ARG...]: urlguard-server on repo/ at a port it picks, with ARG... added; $server is its
# base URL. Exits 1 with its stderr when it does not say where it listens within 5 s.
start_reference_server() {
  setsid "$bin/urlguard-server" --repo repo --listen 127.0.0.1:0 "$@" > server.out 2> server.err &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^listening on' server.out && break; sleep 0.05; done
  server=$(sed -n 's/^listening on //p' server.out)
  [ -n "$server" ] || { echo "urlguard-server did not start:"; cat server.err; exit 1; }
}

# check_metrics NAME URL [WANT...]: URL's body saved as NAME.metrics; each WANT line must be in it (so an empty or
# truncated body cannot pass as "no problems") and promtool must print nothing about it. Sets failed=1 otherwise.
check_metrics() {
  local name=$1 url=$2 want out
  shift 2
  curl -sf "$url" > "$name.metrics"
  for want in "$@"; do
    grep -qF "$want" "$name.metrics" || { echo "FAIL: $name: /metrics lacks '$want'"; failed=1; }
  done
  if out=$(promtool check metrics < "$name.metrics" 2>&1) && [ -z "$out" ]; then
    echo "$name: promtool check metrics: ok ($(grep -vc '^#' "$name.metrics") samples)"
  else
    echo "FAIL: $name: promtool check metrics:"; echo "$out"; failed=1
  fi
}
