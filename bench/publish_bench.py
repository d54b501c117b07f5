#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
"""publish_bench: time and peak memory of `urlguard-publish publish` on a generated text feed.

Builds the first version of a list of N entries (default 10 M: URLs, domains and IPv4 addresses, generated
deterministically and streamed to a file) with --threads 2 and, in the same run, the 1-thread baseline. Wall time,
CPU time (user + system of the child) and peak RSS (getrusage ru_maxrss of the child) per run.

    bench/publish_bench.py --publish build-rel/tools/urlguard-publish [--entries 10000000] [--budget 1G] [--json]

--json (or URLGUARD_BENCH_JSON=1) prints one JSON row per measure for bench/perf_table.py:
publish_build_s (2 threads, baseline: 1 thread) and publish_peak_rss_mb.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time


def write_feed(path, n):
    with open(path, "w") as f:
        buf = []
        for i in range(n):
            x = (i * 2654435761) % (4 * n + 7)
            k = i % 8
            if k == 0:
                buf.append("d%d.example\n" % x)
            elif k == 1:
                buf.append("10.%d.%d.%d\n" % (x >> 16 & 255, x >> 8 & 255, x & 255))
            else:
                buf.append("https://site%d.example/a/b?q=%d\n" % (x, x % 13))
            if len(buf) >= 65536:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))


def run_publish(exe, repo, key, feed, threads, budget):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    # A fresh child per run: ru_maxrss of RUSAGE_CHILDREN is the largest child so far, so measure via wait4.
    p = subprocess.Popen([exe, "publish", "--repo", repo, "--key", key, "--list", "bench", "--input", "plain:" + feed,
                          "--threads", str(threads), "--memory-budget", budget],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if status != 0:
        sys.exit("urlguard-publish failed: " + p.stderr.read().decode(errors="replace"))
    del before
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--publish", required=True, help="path to urlguard-publish (Release build)")
    ap.add_argument("--entries", type=int, default=10_000_000)
    ap.add_argument("--budget", default="1G")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    as_json = a.json or os.environ.get("URLGUARD_BENCH_JSON") == "1"
    work = tempfile.mkdtemp(prefix="publish_bench.")
    try:
        feed = os.path.join(work, "feed.txt")
        write_feed(feed, a.entries)
        subprocess.run([a.publish, "keygen", "--out", work], check=True, stdout=subprocess.DEVNULL)
        key = os.path.join(work, "urlguard-ed25519.pem")
        res = {}
        for threads in (1, 2):
            repo = os.path.join(work, "repo%d" % threads)
            res[threads] = run_publish(a.publish, repo, key, feed, threads, a.budget)
        n = "%.0f M" % (a.entries / 1e6) if a.entries >= 1_000_000 else str(a.entries)
        if as_json:
            print(json.dumps({"row": "publish_build_s", "value": round(res[2][0], 2), "unit": "s",
                              "baselines": {"1_thread": round(res[1][0], 2)},
                              "note": "%s entries from text, first version, --threads 2, budget %s; CPU %.1f s "
                                      "(1 thread: CPU %.1f s)" % (n, a.budget, res[2][1], res[1][1])}))
            print(json.dumps({"row": "publish_peak_rss_mb", "value": round(res[2][2], 1), "unit": "MB",
                              "baselines": {"1_thread": round(res[1][2], 1)},
                              "note": "%s entries, budget %s, peak RSS of urlguard-publish" % (n, a.budget)}))
        else:
            for t in (1, 2):
                w, c, r = res[t]
                print("%s entries, %d thread(s), budget %s: wall %.2f s, CPU %.2f s, peak RSS %.1f MB" %
                      (n, t, a.budget, w, c, r))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
