#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
"""scale_bench: issue 13's benchmark. For each list size N (default 1M and 10M; 100M only when asked), with the
real tools on 127.0.0.1:

  1. gen_corpus writes version 1 (N entries), version 2 (25 k removed, 25 k added), the two change files,
     100 000 browsing URLs (1% hit the list) and a wrk script of verify requests (bench/corpus.h).
  2. urlguard-publish publish version 1, then version 2: wall, CPU and peak RSS (/usr/bin/time -v).
  3. Bytes: snapshot (raw and on the wire), diff 1->2 on the wire, full-hash store (REPO/private minus the
     list copies, the seen filter and the lock).
  4. urlguard-server serves the repository; urlguard sync --once installs version 1 (time, peak RSS); a second
     sync --once finds nothing new (its peak RSS is the client's idle); after version 2 is published, a third
     applies the diff (time, peak RSS, RSS above idle, list file bytes).
  5. urlguard check --timing over the browsing URLs against the synced data directory: ns per lookup.
  6. wrk against POST /v1/verify: requests per second and server CPU per request (/proc/PID/stat).

Prints a table (one column per N) and, with --json or URLGUARD_BENCH_JSON=1, one JSON row per measure
({"row", "value", "unit", "baselines", "note"}) for bench/perf_table.py.

Tools change while this benchmark lives; everything that depends on their flags is a variable:
  PUBLISH_FLAGS      extra flags for every `urlguard-publish publish` (e.g. "--memory-budget 1G")
  PUBLISH_V1_INPUTS  the inputs of version 1 (default "--input plain:{v1}")
  PUBLISH_V2_INPUTS  the inputs of version 2 (default "--input plain:{v2}"; an incremental publisher might take
                     "--add plain:{added} --remove plain:{removed}"); {v1} {v2} {added} {removed} are replaced
  SERVER_FLAGS       extra flags for urlguard-server (default "--throttle 59 --max-requests-per-second 0 --workers 2")
  SYNC_FLAGS         extra flags for `urlguard sync`
  HASH_STORE_GLOBS   space-separated globs below REPO/private that make up the full-hash store
                     (default "hashes.sqlite hashes.sqlite-wal lists/*/*.ugh")
  WRK_SECONDS, WRK_CONNECTIONS   the verify load (default 10 s, 8 connections, one wrk thread)

Usage: bench/scale_bench.py [--sizes 1M,10M] [--bin build-rel/bin] [--bench-bin build-rel/bench]
                            [--work /tmp/urlguard-scale] [--keep] [--json] [--raw FILE] [--from-raw FILE]
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

LIST = "bench"
BROWSING_URLS = 100000
CHANGES_REMOVED = 25000
CHANGES_ADDED = 25000
BYTES_PER_ENTRY_ON_DISK = 250


def parse_size(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError("size must look like 1M, 250k, 10M or 1000000: " + text)
    mult = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def size_label(n):
    if n % 10**9 == 0:
        return "%dG" % (n // 10**9)
    if n % 10**6 == 0:
        return "%dM" % (n // 10**6)
    if n % 10**3 == 0:
        return "%dk" % (n // 10**3)
    return str(n)


def log(msg):
    print("scale_bench: " + msg, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run_timed(cmd, stdin=None, stdout=None, env=None):
    """Runs cmd under /usr/bin/time -v. Returns (returncode, stdout text, stderr text, stats dict)."""
    full = ["/usr/bin/time", "-v"] + cmd
    log("$ " + " ".join(shlex.quote(c) for c in cmd))
    p = subprocess.run(full, stdin=stdin, stdout=stdout if stdout is not None else subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env)
    err = p.stderr
    stats = {}
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", err)
    if m:
        stats["wall_s"] = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    for key, pat in (("user_s", r"User time \(seconds\): ([\d.]+)"), ("sys_s", r"System time \(seconds\): ([\d.]+)"),
                     ("max_rss_kb", r"Maximum resident set size \(kbytes\): (\d+)")):
        m = re.search(pat, err)
        if m:
            stats[key] = float(m.group(1))
    stats["cpu_s"] = stats.get("user_s", 0.0) + stats.get("sys_s", 0.0)
    tool_err = err.split("\tCommand being timed:")[0]
    return p.returncode, p.stdout if stdout is None else "", tool_err, stats


def check(rc, what, out, err):
    if rc != 0:
        sys.stderr.write(out[-4000:] + err[-4000:])
        raise SystemExit("scale_bench: %s failed (exit %d)" % (what, rc))


def file_bytes(path):
    return os.path.getsize(path) if os.path.exists(path) else None


# The verify server's store below REPO/private: the SQLite store of older publishers (and its WAL), or the
# mapped full-hash files, one per list (docs/full-hash-format.md, docs/repository-layout.md).
DEFAULT_HASH_STORE_GLOBS = "hashes.sqlite hashes.sqlite-wal lists/*/*.ugh"


def hash_store_bytes(repo):
    private = os.path.join(repo, "private")
    files = set()
    for g in os.environ.get("HASH_STORE_GLOBS", DEFAULT_HASH_STORE_GLOBS).split():
        files.update(p for p in glob.glob(os.path.join(private, g)) if os.path.isfile(p))
    return sum(os.path.getsize(p) for p in files), sorted(os.path.relpath(p, private) for p in files)


def proc_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime


def proc_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Server:
    def __init__(self, binary, repo):
        flags = shlex.split(os.environ.get("SERVER_FLAGS", "--throttle 59 --max-requests-per-second 0 --workers 2"))
        cmd = [binary, "--repo", repo, "--listen", "127.0.0.1:0"] + flags
        log("$ " + " ".join(shlex.quote(c) for c in cmd))
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            self.stop()
            raise SystemExit("scale_bench: urlguard-server did not start: " + line)
        self.url = m.group(1).rstrip("/")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def find_list_file(data_dir):
    """(bytes, path) of the installed list file: the largest *.ugs file below the data directory."""
    best = (0, "")
    for root, _, names in os.walk(data_dir):
        for n in names:
            p = os.path.join(root, n)
            if n.endswith(".ugs") and os.path.isfile(p) and not os.path.islink(p):
                best = max(best, (os.path.getsize(p), p))
    return best


def expand(template, files):
    return [a.format(**files) for a in shlex.split(template)]


def measure(n, args, bins):
    label = size_label(n)
    work = os.path.join(args.work, label)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r = {"entries": n, "load_before": loadavg()}
    files = {k: os.path.join(work, v) for k, v in (("v1", "v1.txt"), ("v2", "v2.txt"), ("added", "added.txt"),
                                                    ("removed", "removed.txt"))}
    browse, lua = os.path.join(work, "browse.txt"), os.path.join(work, "verify.lua")

    # 1. Corpus.
    t0 = time.monotonic()
    gen = bins["gen_corpus"]
    for cmd in ([gen, "--entries", str(n), "--out", files["v1"], "--added-out", files["added"],
                 "--removed-out", files["removed"], "--removed", str(CHANGES_REMOVED), "--added", str(CHANGES_ADDED)],
                [gen, "--entries", str(n), "--version", "2", "--out", files["v2"], "--removed", str(CHANGES_REMOVED),
                 "--added", str(CHANGES_ADDED)],
                [gen, "--entries", str(n), "--browsing", str(BROWSING_URLS), "--out", browse],
                [gen, "--entries", str(n), "--verify-lua", lua]):
        rc, out, err, st = run_timed(cmd)
        check(rc, "gen_corpus", out, err)
        if "gen_v1" not in r:  # the first command writes version 1 and the change files
            r["gen_v1"] = st
    r["feed_bytes"] = os.path.getsize(files["v1"])
    log("corpus written in %.1f s" % (time.monotonic() - t0))

    # 2. Publish version 1.
    repo, keys = os.path.join(work, "repo"), os.path.join(work, "keys")
    rc, out, err, _ = run_timed([bins["urlguard-publish"], "keygen", "--out", keys])
    check(rc, "keygen", out, err)
    private_key, public_key = os.path.join(keys, "urlguard-ed25519.pem"), os.path.join(keys, "urlguard-ed25519.pub.pem")
    publish = [bins["urlguard-publish"], "publish", "--repo", repo, "--key", private_key, "--list", LIST,
               "--expires-in", "7d"] + shlex.split(os.environ.get("PUBLISH_FLAGS", ""))
    v1_inputs = expand(os.environ.get("PUBLISH_V1_INPUTS", "--input plain:{v1}"), files)
    rc, out, err, st = run_timed(publish + v1_inputs)
    check(rc, "publish version 1", out, err)
    r["publish_v1"] = st
    m = re.search(r"snapshot (\d+) bytes \((\d+) on the wire\)", out)
    r["snapshot_bytes"] = int(m.group(1)) if m else None
    r["snapshot_wire_bytes"] = int(m.group(2)) if m else None
    r["hash_store_bytes"], r["hash_store_files"] = hash_store_bytes(repo)

    server = Server(bins["urlguard-server"], repo)
    try:
        # 4. Client: install version 1, idle, then (after version 2) the diff.
        data = os.path.join(work, "client")
        sync = [bins["urlguard"], "sync", "--data-dir", data, "--server", server.url, "--public-key", public_key,
                "--list", LIST, "--once"] + shlex.split(os.environ.get("SYNC_FLAGS", ""))
        rc, out, err, st = run_timed(sync)
        check(rc, "sync version 1", out, err)
        r["sync_v1"] = st
        rc, out, err, st = run_timed(sync)
        check(rc, "sync (nothing new)", out, err)
        r["sync_idle"] = st

        # 5. Lookups against the installed list.
        with open(browse) as stdin:
            rc, _, err, st = run_timed([bins["urlguard"], "check", "--data-dir", data, "--timing", "-"], stdin=stdin,
                                       stdout=subprocess.DEVNULL)
        if rc not in (0, 1, 2, 3):  # exit bits report hits; 4 and above are errors
            check(rc, "check", "", err)
        # "first pass N ns per lookup (cold), then M ns per lookup warm ..." (tools/urlguard_cli.cc); read loosely.
        m = re.search(r"(\d+(?:\.\d+)?) ns per lookup \(cold\)", err)
        r["lookup_cold_ns"] = float(m.group(1)) if m else None
        m = re.search(r"(\d+(?:\.\d+)?) ns per lookup warm", err)
        r["lookup_warm_ns"] = float(m.group(1)) if m else None
        if r["lookup_warm_ns"] is None:
            log("could not read the lookup time from urlguard check --timing: " + err.strip()[-300:])
        r["check_rss_kb"] = st.get("max_rss_kb")
        # The same URLs through bench/scale_lookup on the installed list file: wall and thread CPU per URL.
        _, list_path = find_list_file(data)
        if os.access(bins["scale_lookup"], os.X_OK) and list_path:
            rc, out, err, st = run_timed([bins["scale_lookup"], "--json", browse, list_path])
            check(rc, "scale_lookup", out, err)
            row = json.loads(out.strip().splitlines()[-1])
            r["lookup_cpu_ns"], r["lookup_wall_ns"] = row["value"], row["baselines"]["wall"]
            r["lookup_cold_cpu_ns"] = row["baselines"]["cold cpu"]

        # 6. Verify API under load.
        r["server_rss_kb"] = proc_rss_kb(server.proc.pid)
        cpu0 = proc_cpu_seconds(server.proc.pid)
        wrk = ["wrk", "-t1", "-c" + os.environ.get("WRK_CONNECTIONS", "8"), "-d" + os.environ.get("WRK_SECONDS", "10") + "s",
               "-s", lua, server.url]
        rc, out, err, st = run_timed(wrk)
        check(rc, "wrk", out, err)
        cpu1 = proc_cpu_seconds(server.proc.pid)
        r["server_rss_after_kb"] = proc_rss_kb(server.proc.pid)
        m = re.search(r"Requests/sec:\s+([\d.]+)", out)
        total = re.search(r"(\d+) requests in", out)
        non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        r["verify_rps"] = float(m.group(1)) if m else None
        r["verify_requests"] = int(total.group(1)) if total else None
        r["verify_non2xx"] = int(non2xx.group(1)) if non2xx else 0
        r["verify_server_cpu_us"] = (cpu1 - cpu0) * 1e6 / r["verify_requests"] if r["verify_requests"] else None
        r["verify_load"] = loadavg()

        # 2b. Publish version 2 (50 k changes), then the client's diff update.
        v2_inputs = expand(os.environ.get("PUBLISH_V2_INPUTS", "--input plain:{v2}"), files)
        rc, out, err, st = run_timed(publish + v2_inputs)
        check(rc, "publish version 2", out, err)
        r["publish_v2"] = st
        m = re.search(r"diff from version 1: (\d+) bytes for (\d+) changed entries", out)
        r["diff_wire_bytes"] = int(m.group(1)) if m else file_bytes(
            os.path.join(repo, "public/v1/lists", LIST, "diff-1-2.ugd.z"))
        r["diff_changed"] = int(m.group(2)) if m else None
        r["hash_store_bytes_v2"], _ = hash_store_bytes(repo)
        rc, out, err, st = run_timed(sync)
        check(rc, "sync version 2", out, err)
        r["sync_v2"] = st
        r["sync_v2_report"] = out.strip().splitlines()[-1] if out.strip() else ""
        r["list_file_bytes"], _ = find_list_file(data)
    finally:
        server.stop()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return r


def rows_for(results):
    """(row id, label, unit, value function, note) for the table and the JSON rows."""
    mb = lambda b: None if b is None else b / 1e6
    return [
        ("publish_v1_wall", "publish v1: wall", "s", lambda r: r["publish_v1"]["wall_s"], "urlguard-publish publish, first version"),
        ("publish_v1_cpu", "publish v1: CPU", "s", lambda r: r["publish_v1"]["cpu_s"], "user + sys"),
        ("publish_v1_rss", "publish v1: peak RSS", "MB", lambda r: r["publish_v1"]["max_rss_kb"] / 1e3, "/usr/bin/time -v"),
        ("publish_v2_wall", "publish v2 (50 k changes): wall", "s", lambda r: r["publish_v2"]["wall_s"],
         "25 k removed, 25 k added"),
        ("publish_v2_cpu", "publish v2: CPU", "s", lambda r: r["publish_v2"]["cpu_s"], "user + sys"),
        ("publish_v2_rss", "publish v2: peak RSS", "MB", lambda r: r["publish_v2"]["max_rss_kb"] / 1e3, ""),
        ("snapshot_bytes", "snapshot", "MB", lambda r: mb(r["snapshot_bytes"]), "uncompressed list file"),
        ("snapshot_wire_bytes", "snapshot on the wire", "MB", lambda r: mb(r["snapshot_wire_bytes"]), "zlib"),
        ("diff_bytes", "diff v1->v2 on the wire", "kB", lambda r: None if r["diff_wire_bytes"] is None else
         r["diff_wire_bytes"] / 1e3, "50 k changed entries"),
        ("hash_store_bytes", "full-hash store", "MB", lambda r: mb(r["hash_store_bytes"]), "REPO/private store files"),
        ("sync_v1_wall", "client sync v1 (snapshot): wall", "s", lambda r: r["sync_v1"]["wall_s"], "loopback"),
        ("sync_v1_rss", "client sync v1: peak RSS", "MB", lambda r: r["sync_v1"]["max_rss_kb"] / 1e3, ""),
        ("sync_v2_wall", "client sync v2 (diff): wall", "s", lambda r: r["sync_v2"]["wall_s"], "loopback"),
        ("sync_v2_rss", "client sync v2: peak RSS", "MB", lambda r: r["sync_v2"]["max_rss_kb"] / 1e3, ""),
        ("sync_idle_rss", "client sync, nothing new: peak RSS (idle)", "MB",
         lambda r: r["sync_idle"]["max_rss_kb"] / 1e3, "the same binary and data directory, 304 path"),
        ("sync_v2_rss_above_idle", "client diff update: RSS above idle", "MB",
         lambda r: (r["sync_v2"]["max_rss_kb"] - r["sync_idle"]["max_rss_kb"]) / 1e3, "target <= 1x list file"),
        ("list_file_bytes", "client list file", "MB", lambda r: mb(r["list_file_bytes"]), ""),
        ("sync_v2_rss_ratio", "diff update above idle / list file", "x",
         lambda r: (r["sync_v2"]["max_rss_kb"] - r["sync_idle"]["max_rss_kb"]) * 1e3 / r["list_file_bytes"]
         if r["list_file_bytes"] else None, "target <= 1"),
        ("lookup_cpu_ns", "lookup per URL, warm: CPU", "ns", lambda r: r["lookup_cpu_ns"],
         "bench/scale_lookup on the installed list, 100 k browsing URLs (1% hits), one thread, thread CPU time"),
        ("lookup_wall_ns", "lookup per URL, warm: wall", "ns", lambda r: r["lookup_wall_ns"], "scale_lookup"),
        ("lookup_cold_cpu_ns", "lookup per URL, first pass: CPU", "ns", lambda r: r["lookup_cold_cpu_ns"],
         "page faults on the mapping"),
        ("check_warm_ns", "urlguard check --timing, warm (wall)", "ns", lambda r: r["lookup_warm_ns"],
         "the CLI through the client's data directory"),
        ("check_cold_ns", "urlguard check --timing, first pass (wall)", "ns", lambda r: r["lookup_cold_ns"], ""),
        ("verify_rps", "verify API", "req/s", lambda r: r["verify_rps"], "wrk -t1 -c8, 1-5 prefixes, 20% listed"),
        ("verify_cpu_us", "verify: server CPU per request", "us", lambda r: r["verify_server_cpu_us"],
         "/proc/PID/stat; steadier than req/s on a busy machine"),
        ("gen_v1_wall", "gen_corpus v1 + changes: wall", "s", lambda r: r["gen_v1"]["wall_s"], "streaming"),
        ("gen_v1_rss", "gen_corpus: peak RSS", "MB", lambda r: r["gen_v1"]["max_rss_kb"] / 1e3, "constant in N"),
        ("verify_server_rss", "verify server RSS after the load", "MB", lambda r: r["server_rss_after_kb"] / 1e3,
         "urlguard-server, store of N hashes"),
        ("load_avg", "load average before", "", lambda r: r["load_before"], "2 cores"),
    ]


def target_lines(results):
    """Issue 13's targets, for the sizes this run has: [(text, JSON row or None)]."""
    out = []
    by = {r["entries"]: r for r in results}
    big = max(by) if by else None

    def verdict(ok, at_size=True):
        if not at_size:
            return "not judged below 100M"
        return "met" if ok else "NOT met"

    judged = big is not None and big >= 100 * 10**6

    if big is not None:
        r = by[big]
        rss = safe(lambda r: r["publish_v1"]["max_rss_kb"] / 1e6, r)
        if rss is not None:
            out.append(("publisher peak RSS at %s: %.2f GB (target <= 1 GB at 100M): %s" % (
                size_label(big), rss, verdict(rss <= 1.0, judged)), None))
        v2 = safe(lambda r: r["publish_v2"]["wall_s"], r)
        if v2 is not None:
            out.append(("50 k-change version at %s: %.1f s wall, %.1f s CPU (target <= 30 s at 100M): %s" % (
                size_label(big), v2, r["publish_v2"]["cpu_s"], verdict(v2 <= 30, judged)), None))
        if big >= 100 * 10**6:
            v1 = safe(lambda r: r["publish_v1"]["wall_s"], r)
            out.append(("first version at %s: %.0f s (target <= 15 min): %s" % (size_label(big), v1, verdict(v1 <= 900)),
                        None))
    for n, r in sorted(by.items()):
        ratio = safe(lambda r: (r["sync_v2"]["max_rss_kb"] - r["sync_idle"]["max_rss_kb"]) * 1e3 / r["list_file_bytes"], r)
        if ratio is not None:
            out.append(("client diff update at %s: %.2fx the list file above idle (target <= 1x): %s" % (
                size_label(n), ratio, verdict(ratio <= 1.0)), None))
    small = min(by) if by else None
    ref = 10 * 10**6 if 10 * 10**6 in by and big != 10 * 10**6 else small
    lookup_key = "lookup_cpu_ns" if all(r.get("lookup_cpu_ns") for r in results) else "lookup_warm_ns"
    for key, what, limit, better in ((lookup_key, "lookup per URL", 1.5, "<="), ("verify_rps", "verify API", 0.7, ">=")):
        base_n = ref if key == lookup_key else small
        if big is None or base_n is None or base_n == big:
            continue
        a, b = by[big].get(key), by[base_n].get(key)
        if not a or not b:
            continue
        ratio = a / b
        ok = ratio <= limit if better == "<=" else ratio >= limit
        out.append(("%s at %s vs %s: %.2fx (target %s %.1fx at 100M): %s" % (
            what, size_label(big), size_label(base_n), ratio, better, limit, verdict(ok, judged)),
            {"row": "scale.%s_ratio.%s_vs_%s" % (key.split("_")[0], size_label(big), size_label(base_n)),
             "value": round(ratio, 3), "unit": "x", "baselines": {size_label(base_n): b},
             "note": "%s at %s over %s (issue 13 target %s %.1f)" % (what, size_label(big), size_label(base_n), better,
                                                                    limit)}))
    return out


def safe(fn, r):
    try:
        return fn(r)
    except (KeyError, TypeError, ZeroDivisionError):
        return None


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return "{:,.0f}".format(v)
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap.add_argument("--sizes", default="1M,10M", help="comma-separated list sizes (default 1M,10M; 100M on request)")
    ap.add_argument("--bin", default=os.path.join(root, "build-rel", "bin"), help="urlguard, urlguard-publish, urlguard-server")
    ap.add_argument("--bench-bin", default=os.path.join(root, "build-rel", "bench"), help="gen_corpus")
    ap.add_argument("--work", default="/tmp/urlguard-scale", help="scratch directory (100M needs about 20 GB)")
    ap.add_argument("--keep", action="store_true", help="keep the corpus, repository and data directory")
    ap.add_argument("--json", action="store_true", default=os.environ.get("URLGUARD_BENCH_JSON") == "1",
                    help="print one JSON row per measure and size (also URLGUARD_BENCH_JSON=1)")
    ap.add_argument("--raw", help="also write every measurement to this JSON file")
    ap.add_argument("--from-raw", help="print the table and rows of an earlier --raw file instead of measuring")
    args = ap.parse_args()
    if args.from_raw:
        with open(args.from_raw) as f:
            report(json.load(f), args)
        return
    sizes = [parse_size(s) for s in args.sizes.split(",") if s]
    bins = {b: os.path.join(args.bench_bin, b) for b in ("gen_corpus", "scale_lookup")}
    for b in ("urlguard", "urlguard-publish", "urlguard-server"):
        bins[b] = os.path.join(args.bin, b)
    for b, p in bins.items():
        if b != "scale_lookup" and not os.access(p, os.X_OK):
            raise SystemExit("scale_bench: %s not found at %s (build it, or pass --bin / --bench-bin)" % (b, p))
    for tool in ("/usr/bin/time", shutil.which("wrk")):
        if not tool or not os.access(tool, os.X_OK):
            raise SystemExit("scale_bench: needs /usr/bin/time and wrk (apt-get install time wrk)")

    # Disk: about 200 bytes per entry at once today (two feeds of 39 B per entry, the SQLite store and its WAL,
    # the private copies); refuse early rather than fill the disk halfway through a 100 M run.
    os.makedirs(args.work, exist_ok=True)
    need = max(sizes) * BYTES_PER_ENTRY_ON_DISK
    free = shutil.disk_usage(args.work).free
    if free < need:
        raise SystemExit("scale_bench: %s has %.1f GB free, %s entries need about %.1f GB" %
                         (args.work, free / 1e9, size_label(max(sizes)), need / 1e9))

    results = []
    for n in sizes:
        log("=== %s entries ===" % size_label(n))
        results.append(measure(n, args, bins))
    if args.raw:
        with open(args.raw, "w") as f:
            json.dump(results, f, indent=1)
    report(results, args)


def report(results, args):
    rows = rows_for(results)
    labels = [size_label(r["entries"]) for r in results]
    width = max(len(row[1]) + len(row[2]) + 3 for row in rows)
    print("== urlguard scale benchmark (loopback, %d browsing URLs, 50 k-change version 2) ==" % BROWSING_URLS)
    print("%-*s" % (width, "measure") + "".join("%14s" % l for l in labels))
    for rid, name, unit, fn, _ in rows:
        head = name + (" (%s)" % unit if unit else "")
        print("%-*s" % (width, head) + "".join("%14s" % fmt(safe(fn, r)) for r in results))
    print("hash store files: " + ", ".join(results[0]["hash_store_files"]) if results else "")
    targets = target_lines(results)
    if targets:
        print("\nissue 13 targets (sizes as measured in this run):")
        for line, _ in targets:
            print("  " + line)
    if args.json:
        for _, row in targets:
            if row is not None:
                print(json.dumps(row))
        base = results[0]
        for rid, name, unit, fn, note in rows:
            for r in results:
                v = safe(fn, r)
                if v is None:
                    continue
                baselines = {}
                if r is not base:
                    bv = safe(fn, base)
                    if bv is not None:
                        baselines["at " + size_label(base["entries"])] = bv
                print(json.dumps({"row": "scale.%s.%s" % (rid, size_label(r["entries"])), "value": round(v, 3),
                                  "unit": unit, "baselines": baselines,
                                  "note": "%s; %s entries%s" % (name, size_label(r["entries"]),
                                                                 "; " + note if note else "")}))


if __name__ == "__main__":
    main()
