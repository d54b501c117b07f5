#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
"""publish_bench: time and peak memory of `urlguard-publish publish` on a generated text feed.

Builds the first version of a list of N entries (default 10 M: URLs, domains and IPv4 addresses, generated
deterministically and streamed to a file) with --threads 2 and, in the same run, the 1-thread baseline. Wall time,
CPU time (user + system of the child) and peak RSS (getrusage ru_maxrss of the child) per run.

    bench/publish_bench.py --publish build-rel/tools/urlguard-publish [--entries 10000000] [--budget 1G] [--json]
                           [--stages]

--incremental [--changes 50000] [--manifest-format 2] [--baseline OLD/urlguard-publish]: builds the list of N entries once, then times one
incremental version `publish --add --remove` with changes/2 new entries added and changes/2 listed entries removed
(issue 17: a version should cost what changed). With --baseline, the same on a repository built and published by
that binary (e.g. main's), in the same run.

--epoch-versions K (with --manifest-format 2): K untimed versions of --changes changes each (their own entries)
before the timed one, so it runs deep into an epoch (docs/scale.md §7: a version's cost grows with the
fingerprints touched since the checkpoint; K = 20 at 50 k changes is about 1 M). --keep-repo DIR keeps the timed
run's repository (and its change files) to profile the next version by hand, e.g. under valgrind --tool=callgrind.

--stages prints each run's per-step wall and CPU time (urlguard-publish with URLGUARD_PUBLISH_STAGES=1). Every
line also gives the CPU time per entry and the load average at the end of the run (the machine may be shared: wall
time is only meaningful at a low load; CPU time much less depends on it).

--json (or URLGUARD_BENCH_JSON=1) prints one JSON row per measure for bench/perf_table.py:
publish_build_s (2 threads, baseline: 1 thread) and publish_peak_rss_mb.
"""
import argparse
import json
import os
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


def write_changes(add_path, remove_path, n, changes, round_=0):
    """changes/2 entries never listed (added) and changes/2 entries of write_feed(n) (removed), evenly spread.
    Rounds 0, 1, ... (fewer than n / (changes/2)) add and remove disjoint entries: one version each."""
    half = changes // 2
    with open(add_path, "w") as f:
        tag = "" if round_ == 0 else "r%d-" % round_
        f.write("".join("https://added%s%d.example/new\n" % (tag, i) for i in range(half)))
    step = max(1, n // half)
    with open(remove_path, "w") as f:
        buf = []
        for i in range(round_ % step, n, step):
            if len(buf) == half:
                break
            x = (i * 2654435761) % (4 * n + 7)
            k = i % 8
            if k == 0:
                buf.append("d%d.example\n" % x)
            elif k == 1:
                buf.append("10.%d.%d.%d\n" % (x >> 16 & 255, x >> 8 & 255, x & 255))
            else:
                buf.append("https://site%d.example/a/b?q=%d\n" % (x, x % 13))
        f.write("".join(buf))


def run_publish(exe, repo, key, feed, threads, budget, stages=False, change=None, extra=()):
    t0 = time.monotonic()
    env = dict(os.environ)
    if stages:
        env["URLGUARD_PUBLISH_STAGES"] = "1"
    # A fresh child per run: ru_maxrss of RUSAGE_CHILDREN is the largest child so far, so measure via wait4.
    # stderr goes to a file, not a pipe: a full pipe would stall the child.
    with tempfile.TemporaryFile() as err:
        inputs = ["--input", "plain:" + feed] if change is None else \
            ["--add", "plain:" + change[0], "--remove", "plain:" + change[1]]
        p = subprocess.Popen([exe, "publish", "--repo", repo, "--key", key, "--list", "bench"] + inputs +
                             ["--threads", str(threads), "--memory-budget", budget] + list(extra),
                             stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        err.seek(0)
        text = err.read().decode(errors="replace")
    if status != 0:
        sys.exit("urlguard-publish failed: " + text)
    if stages:
        sys.stderr.write("--- %d thread(s)\n" % threads)
        sys.stderr.write("".join(l + "\n" for l in text.splitlines() if l.startswith("stage ")))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, os.getloadavg()[0]


def warm_state(repo):
    """Reads the publisher's private state and full-hash bases once, so the timed version finds them in the page
    cache (after a 100 M first version they may not be: it writes about 20 GB). Separates a version's own cost from
    the disk reads of a cold cache."""
    d = os.path.join(repo, "private", "lists", "bench")
    for f in sorted(os.listdir(d)):
        if f.endswith(".state") or f.endswith(".ugh"):
            with open(os.path.join(d, f), "rb") as fh:
                while fh.read(1 << 24):
                    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--publish", required=True, help="path to urlguard-publish (Release build)")
    ap.add_argument("--entries", type=int, default=10_000_000)
    ap.add_argument("--budget", default="1G")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--stages", action="store_true", help="per-step wall and CPU time of each run, on stderr")
    ap.add_argument("--incremental", action="store_true", help="time one incremental version of --changes changes")
    ap.add_argument("--changes", type=int, default=50_000)
    ap.add_argument("--baseline", help="another urlguard-publish (e.g. main's) measured the same way (--incremental)")
    ap.add_argument("--manifest-format", type=int, default=1, choices=(1, 2),
                    help="--incremental: publish the list in this manifest format (2: docs/versions.md); with 2, "
                         "the same binary in format 1 is measured too, as the baseline of the same run")
    ap.add_argument("--epoch-versions", type=int, default=0,
                    help="--incremental --manifest-format 2: publish this many versions of --changes changes each "
                         "(untimed, each its own entries) before the timed one, so it runs that deep into an epoch "
                         "(issue 17: a version's cost grows with the fingerprints touched since the checkpoint); "
                         "--checkpoint-changes is raised so that no checkpoint interrupts them")
    ap.add_argument("--keep-repo", help="--incremental: copy the repository of the timed run here afterwards (to "
                    "profile its next version, e.g. under valgrind --tool=callgrind)")
    ap.add_argument("--warm-state", action="store_true",
                    help="--incremental: read the private state bases into the page cache before the timed version")
    ap.add_argument("--skip-format1", action="store_true",
                    help="--incremental --manifest-format 2: leave out the format 1 baseline (its 100 M run takes "
                         "minutes)")
    a = ap.parse_args()
    if a.incremental:
        return incremental(a)
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
            res[threads] = run_publish(a.publish, repo, key, feed, threads, a.budget, a.stages)
        n = "%.0f M" % (a.entries / 1e6) if a.entries >= 1_000_000 else str(a.entries)
        if as_json:
            print(json.dumps({"row": "publish_build_s", "value": round(res[2][0], 2), "unit": "s",
                              "baselines": {"1_thread": round(res[1][0], 2)},
                              "note": "%s entries from text, first version, --threads 2, budget %s; CPU %.1f s = "
                                      "%.2f us/entry (1 thread: CPU %.1f s); 1-thread/2-thread wall %.2fx; load "
                                      "average %.1f / %.1f" %
                                      (n, a.budget, res[2][1], res[2][1] / a.entries * 1e6, res[1][1],
                                       res[1][0] / res[2][0], res[1][3], res[2][3])}))
            print(json.dumps({"row": "publish_peak_rss_mb", "value": round(res[2][2], 1), "unit": "MB",
                              "baselines": {"1_thread": round(res[1][2], 1)},
                              "note": "%s entries, budget %s, peak RSS of urlguard-publish" % (n, a.budget)}))
        else:
            for t in (1, 2):
                w, c, r, load = res[t]
                print("%s entries, %d thread(s), budget %s: wall %.2f s, CPU %.2f s (%.2f us/entry), peak RSS %.1f MB,"
                      " load average %.1f" % (n, t, a.budget, w, c, c / a.entries * 1e6, r, load))
            print("two threads: %.2fx one thread (wall)" % (res[1][0] / res[2][0]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def incremental(a):
    as_json = a.json or os.environ.get("URLGUARD_BENCH_JSON") == "1"
    work = tempfile.mkdtemp(prefix="publish_bench.")
    try:
        feed = os.path.join(work, "feed.txt")
        write_feed(feed, a.entries)
        add, remove = os.path.join(work, "add.txt"), os.path.join(work, "remove.txt")
        write_changes(add, remove, a.entries, a.changes, a.epoch_versions)
        subprocess.run([a.publish, "keygen", "--out", work], check=True, stdout=subprocess.DEVNULL)
        key = os.path.join(work, "urlguard-ed25519.pem")
        n = "%.0f M" % (a.entries / 1e6) if a.entries >= 1_000_000 else str(a.entries)
        res = {}
        runs = [("this", a.publish, a.manifest_format)]
        if a.manifest_format == 2 and not a.skip_format1:
            runs.append(("format 1", a.publish, 1))
        if a.baseline:
            runs.append(("baseline", a.baseline, 1))
        for name, exe, fmt in runs:
            repo = os.path.join(work, "repo-" + name.replace(" ", "-"))
            extra = ["--manifest-format", "2"] if fmt == 2 else []
            run_publish(exe, repo, key, feed, 2, a.budget, extra=extra)  # the list's first version (not timed here)
            inc_extra = []
            if fmt == 2 and a.epoch_versions:
                inc_extra = ["--checkpoint-changes", str(2 * a.changes * (a.epoch_versions + 2))]
                for r in range(a.epoch_versions):
                    padd, premove = os.path.join(work, "add%d.txt" % r), os.path.join(work, "remove%d.txt" % r)
                    write_changes(padd, premove, a.entries, a.changes, r)
                    run_publish(exe, repo, key, feed, 2, a.budget, change=(padd, premove), extra=inc_extra)
            if a.warm_state:
                warm_state(repo)
            res[name] = run_publish(exe, repo, key, feed, 2, a.budget, a.stages, (add, remove), extra=inc_extra)
            if a.keep_repo and name == "this":
                shutil.copytree(repo, a.keep_repo)
                for f in ("add.txt", "remove.txt", "urlguard-ed25519.pem"):
                    shutil.copy(os.path.join(work, f), a.keep_repo)
            shutil.rmtree(repo, ignore_errors=True)
        w, c, r, load = res["this"]
        if as_json:
            row = {"row": "publish_incremental_s", "value": round(w, 2), "unit": "s",
                   "note": "%s-entry list, %d changes (half added, half removed), --threads 2, budget %s; CPU %.2f s, "
                           "peak RSS %.0f MB, load average %.1f" % (n, a.changes, a.budget, c, r, load)}
            row["note"] += "; manifest format %d" % a.manifest_format
            row["baselines"] = {k: round(v[0], 2) for k, v in res.items() if k != "this"}
            print(json.dumps(row))
        else:
            for name in ("this", "format 1", "baseline"):
                if name in res:
                    w, c, r, load = res[name]
                    print("%s: %s-entry list, %d-change version: wall %.2f s, CPU %.2f s, peak RSS %.1f MB, "
                          "load average %.1f" % (name, n, a.changes, w, c, r, load))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
