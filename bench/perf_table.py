#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
"""Prints the performance table (issue 20's targets, and issue 11's rows): every figure with its baselines, all measured in this one run.

    python3 bench/perf_table.py --build-dir build-rel [--entries N] [--work-dir DIR] [--only NAME,...]

Builds nothing: configure and build the Release tree first
    cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release -DURLGUARD_BUILD_BENCH=ON
    cmake --build build-rel
Each bench below that exists in the build tree is run with URLGUARD_BENCH_JSON=1 and URLGUARD_BENCH_ENTRIES=N in
its environment; every stdout line that is a JSON object with a "row" key is a row:
    {"row": "<stable id>", "value": <number>, "unit": "<us|MB|req/s|...>", "baselines": {"<name>": <number>},
     "note": "..."}
A table line whose rows no bench printed says "not measured". The machine (CPU model, cores, load average
before and after) is printed with the table: the machine is often shared, so benches report CPU time too.

Row ids this table expects (also listed in docs/performance.md, "Issue 11 table"):
  lookup_1t_us               library, one thread, median us per URL end to end (bench/lookup_bench);
                             baselines e.g. blocked_bloom_us, unordered_set_us, sqlite_us
  lookup_2t_mups             library, two threads, M URLs/s (bench/lookup_bench)
  lookup_batch_1t_us         library, one thread, CheckBatch per URL (bench/lookup_bench)
  canon_ns                   Canonicalize per URL, ns; baselines cpu_ns, full_path (bench/canon_bench)
  canon_expr_keys_ns         Canonicalize + expressions + XXH3 keys per URL, ns; baselines cpu_ns, one_by_one
  cli_plain_us               `urlguard check -` plain, us per line; baseline dcso_bloom_check_us (bench/cli_bench.py)
  cli_plain_cpu_us           the same in CPU time (user + system of the process); baseline dcso_bloom_check_cpu_us
  cli_json_us                `urlguard check --json -`, us per line; baselines cli_plain_us, json_over_plain
  dcso_must_hit_pct          share of must-hit spellings DCSO bloom finds; baseline urlguard_must_hit_pct
  redis_vs_urlguard_x        Redis GETBIT design / urlguard in-process, same URLs (bench/redis_getbit_bench)
  redis_getbit_us            Redis GETBIT design, us per URL; baseline urlguard_inprocess_us
  redis_must_hit_miss_pct    share of must-hit spellings the Redis design misses; baseline urlguard_miss_pct
  update_apply_s             apply a 50 k-change diff to a 10 M list, verify, install (bench/update_bench)
  update_rss_ratio           client peak RSS above idle during that update / the list file; baseline in_memory_apply
  swap_p999_us               lookup latency p99.9 while updates swap in; baseline no_updates
  catchup_apply_rss_mb       client peak RSS above idle applying one catch-up range diff as large as the list, parsed
                             and decoded as merged (bench/update_bench); baseline decoded_first_mb
  publish_build_s            publisher: build 10 M entries from text, 2 threads (publisher-scale's bench; when
                             no bench prints it, this script times `urlguard-publish build` itself)
  verify_rps                 verify API on loopback, 2 cores, 1-5 prefixes, requests/s (bench/verify_load_bench)
  verify_server_cpu_us       the server's CPU per request; verify_server_allocs its allocations per request
  fp_url_pct_N_bench/_deep   per-URL false positives of an N-entry list at --fp-rate 0.001 on the bench and the
                             deep browsing mix; fp_bits_per_entry_N its size (bench/fp_bench; baseline: old sizing)
  limit_*                    this machine's floors for docs/performance.md's limit table (bench/limits_bench)
  verify_per_1000_pages      verify requests per 1000 clean page loads (bench/page_load_bench); baselines
                             without_result_cache and the fp_<rate> curve; verify_per_1000_pages_fp_<rate> rows
  freshness_*                issue 17 (bench/freshness_bench.py; minutes of wall time, so it runs only when named:
                             --only freshness_bench): freshness_latency_p50_s/_p99_s (ingestion -> client
                             `malicious`), freshness_pickup_s (verify server answering for a new version),
                             freshness_change_wall_s/_fresh_wall_s/_cpu_ratio/_rss_mb (50 k-change version),
                             freshness_checkpoint_now_cpu_s (a checkpoint of the list),
                             freshness_projected_1200m_s, freshness_catchup_60_downloads/_ratio (client away 1 h),
                             freshness_catchup_1440_* (24 h, with FRESHNESS_FLAGS="--catchup-versions 60,1440"),
                             freshness_publish_cpu_s, freshness_client_bytes_per_min
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (table line, target, row id, how to print the value)
TABLE = [
    ("library, one thread, median per URL end to end", "<= 0.4 us", "lookup_1t_us", "{v:.3f} us"),
    ("library, one thread, CheckBatch per URL", "(batched probes)", "lookup_batch_1t_us", "{v:.3f} us"),
    ("library, two threads", ">= 4.5 M URLs/s", "lookup_2t_mups", "{v:.2f} M URLs/s"),
    ("canonicalize one URL", "< ada's ~190 ns", "canon_ns", "{v:.0f} ns"),
    ("canonicalize + expressions + keys", "(stage)", "canon_expr_keys_ns", "{v:.0f} ns"),
    ("`urlguard check -`, plain, per line, CPU", "<= DCSO `bloom check` CPU", "cli_plain_cpu_us", "{v:.3f} us"),
    ("`urlguard check -`, plain, per line, wall", "<= DCSO `bloom check`", "cli_plain_us", "{v:.3f} us"),
    ("`urlguard check --json -`, per line", "<= 1.3x plain", "cli_json_us", "{v:.3f} us"),
    ("must-hit spellings found by DCSO `bloom check`", "(accuracy)", "dcso_must_hit_pct", "{v:.1f}%"),
    ("vs a Redis GETBIT design (pipelined, hiredis)", ">= 200x in-process", "redis_vs_urlguard_x", "{v:.0f}x"),
    ("Redis GETBIT design, per URL", "(baseline)", "redis_getbit_us", "{v:.1f} us"),
    ("must-hit spellings missed by the Redis design", "(accuracy)", "redis_must_hit_miss_pct", "{v:.1f}%"),
    ("apply a 50 k-change diff to a 10 M list, verify, install", "<= 0.5 s", "update_apply_s", "{v:.3f} s"),
    ("client peak RSS during that update, above idle", "<= 1x the list file", "update_rss_ratio", "{v:.2f}x the list file"),
    ("lookup latency while updates swap in (p99.9)", "<= 5 us, no stall", "swap_p999_us", "{v:.2f} us"),
    ("publisher: first version of 10 M entries from text, 2 threads", "<= 4 s; >= 1.7x 1 thread", "publish_build_s",
     "{v:.2f} s"),
    ("verify API on loopback, 2 cores, 1-5 prefixes", ">= 100 k req/s", "verify_rps", "{v:,.0f} req/s"),
    ("verify API server CPU per request", "<= 5 us", "verify_server_cpu_us", "{v:.2f} us"),
    ("verify API server allocations per request", "(none of ours)", "verify_server_allocs", "{v:.1f}"),
    ("verify requests per 1000 clean page loads (result cache)", "<= 10", "verify_per_1000_pages", "{v:.1f}"),
    ("false positives per URL, --fp-rate 0.001, bench mix", "<= 0.1%", "fp_url_pct_{n}_bench", "{v:.4f}%"),
    ("false positives per URL, --fp-rate 0.001, deep mix", "<= 0.1%", "fp_url_pct_{n}_deep", "{v:.4f}%"),
    ("list bits per entry (fp_bench's list)", "same bytes +-10%", "fp_bits_per_entry_{n}", "{v:.3f} bits"),
    ("floor: one dependent load, 16 MB (4 KiB pages)", "(floor)", "limit_chase_16mb_ns", "{v:.0f} ns"),
    ("floor: one dependent load, 256 MB", "(floor)", "limit_chase_256mb_ns", "{v:.0f} ns"),
    ("floor: one URL's 6 probes, prefetched", "(floor)", "limit_probe_url_pf_ns", "{v:.0f} ns"),
    ("floor: one probe in a batch of 48, prefetched", "(floor)", "limit_probe_batch_pf_ns", "{v:.0f} ns"),
    ("50 k-change version, wall, deep into an epoch (issue 17)", "<= 1 s at 10 M", "freshness_change_wall_s",
     "{v:.2f} s"),
    ("the same right after a checkpoint", "<= 1 s at 10 M", "freshness_change_fresh_wall_s", "{v:.2f} s"),
    ("its CPU over its CPU at 1 M, both right after a checkpoint", "<= 1.5x", "freshness_change_cpu_ratio",
     "{v:.2f}x"),
    ("its peak RSS", "<= 1 GB at 100 M", "freshness_change_rss_mb", "{v:.0f} MB"),
    ("verify server answering for a new version after its commit", "<= 5 s", "freshness_pickup_s", "{v:.2f} s"),
    ("ingestion -> client `malicious`, p99 (1,400/s, 60-s versions)", "<= 120 s", "freshness_latency_p99_s",
     "{v:.1f} s"),
    ("ingestion -> client `malicious`, p50", "(median)", "freshness_latency_p50_s", "{v:.1f} s"),
    ("client away 1 h: downloads after the manifest", "<= 2", "freshness_catchup_60_downloads", "{v:.0f}"),
    ("client away 1 h: bytes over one diff of its changes", "<= 1.3x", "freshness_catchup_60_ratio", "{v:.2f}x"),
    ("client away 24 h: downloads after the manifest", "<= 2", "freshness_catchup_1440_downloads", "{v:.0f}"),
    ("client away 24 h: bytes over one diff of its changes", "<= 1.3x", "freshness_catchup_1440_ratio", "{v:.2f}x"),
    ("projected 50 k-change version CPU at 1.2 B entries", "<= 10 s", "freshness_projected_1200m_s", "{v:.1f} s"),
    ("publisher CPU per version (live)", "(follows the changes)", "freshness_publish_cpu_s", "{v:.2f} s"),
    ("client bytes per minute (live)", "(~2 B per change)", "freshness_client_bytes_per_min", "{v:,.0f} B"),
]


def machine():
    model = platform.processor() or "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return model, os.cpu_count()


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def parse_rows(text):
    rows = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and "row" in r and "value" in r:
            rows[r["row"]] = r
    return rows


def run(name, cmd, env, timeout, log):
    """Runs one bench, returns its rows; its full output goes to the log file."""
    if not os.path.exists(cmd[0]) and not cmd[0].endswith(".py"):
        print(f"perf_table: {name}: {cmd[0]} not built, skipped", file=sys.stderr)
        return {}
    print(f"perf_table: running {name} (load {load()}) ...", file=sys.stderr, flush=True)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        out, rc = p.stdout, p.returncode
        log.write(f"==== {name}: {' '.join(cmd)} (rc {rc}, {time.time() - t0:.0f} s)\n{out}\n{p.stderr}\n")
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        log.write(f"==== {name}: timed out after {timeout} s\n{out}\n")
        rc = -1
    log.flush()
    rows = parse_rows(out)
    if rc != 0:
        print(f"perf_table: {name} exited {rc} ({len(rows)} rows kept)", file=sys.stderr)
    return rows


def time_publish_build(build_dir, work, log):
    """publish_build_s fallback: `urlguard-publish build` of the corpus list, wall and CPU."""
    exe = os.path.join(build_dir, "bin", "urlguard-publish")
    if not os.path.exists(exe):
        return {}
    cmd = [exe, "build", "--list", "bench", "--input", "plain:" + os.path.join(work, "list.txt"), "--out",
           os.path.join(work, "publish-build.ugs")]
    print(f"perf_table: timing urlguard-publish build (load {load()}) ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    log.write(f"==== urlguard-publish build: {wall:.2f} s\n{out.decode(errors='replace')}\n")
    if os.waitstatus_to_exitcode(status) != 0:
        return {}
    cpu = usage.ru_utime + usage.ru_stime
    return {"publish_build_s": {"row": "publish_build_s", "value": wall, "unit": "s",
                                "baselines": {"cpu_s": round(cpu, 2)},
                                "note": "`urlguard-publish build` of the corpus list (its default threads), "
                                        "timed by perf_table.py"}}


def fmt_baselines(r):
    b = r.get("baselines") or {}
    return ", ".join(f"{k} {v:g}" if isinstance(v, (int, float)) else f"{k} {v}" for k, v in b.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--entries", type=int, default=10_000_000)
    ap.add_argument("--urls", type=int, default=200_000, help="clean URLs for the CLI rows")
    ap.add_argument("--work-dir", default="/tmp/urlguard-perf")
    ap.add_argument("--only", default="", help="comma-separated bench names to run (default: all)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per bench")
    a = ap.parse_args()

    build = os.path.abspath(a.build_dir)
    bench = os.path.join(build, "bench")
    work = os.path.join(os.path.abspath(a.work_dir), str(a.entries))
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, URLGUARD_BENCH_JSON="1", URLGUARD_BENCH_ENTRIES=str(a.entries), URLGUARD_BENCH_DIR=work)
    model, cores = machine()
    load_before = load()
    only = set(filter(None, a.only.split(",")))
    log_path = os.path.join(work, "perf_table.log")

    benches = [
        ("bench_corpus", [os.path.join(bench, "bench_corpus"), "--entries", str(a.entries), "--urls", str(a.urls),
                          "--out", work]),
        ("lookup_bench", [os.path.join(bench, "lookup_bench"), "--benchmark_min_time=0.5"]),
        ("canon_bench", [os.path.join(bench, "canon_bench"), "--json"]),
        ("cli_bench", [sys.executable, os.path.join(HERE, "cli_bench.py"), "--build-dir", build, "--dir", work,
                       "--json"]),
        ("redis_getbit_bench", [os.path.join(bench, "redis_getbit_bench"), "--dir", work, "--json"]),
        ("page_load_bench", [os.path.join(bench, "page_load_bench"), "--dir", work, "--json"]),
        ("update_bench", [os.path.join(bench, "update_bench"), "--entries", str(a.entries)]),
        ("publish_bench", [sys.executable, os.path.join(HERE, "publish_bench.py"), "--publish",
                           os.path.join(build, "bin", "urlguard-publish"), "--entries", str(a.entries)]),
        ("verify_load_bench", [os.path.join(bench, "verify_load_bench"), "--dir", os.path.join(work, "verify"),
                               "--json"]),
        ("limits_bench", [os.path.join(bench, "limits_bench"), "--json"]),
        ("fp_bench", [os.path.join(bench, "fp_bench"), "--entries", str(a.entries)]),
        ("freshness_bench", [sys.executable, os.path.join(HERE, "freshness_bench.py"), "--bin",
                             os.path.join(build, "bin"), "--entries", str(a.entries), "--work",
                             os.path.join(work, "freshness"), "--json"] +
         os.environ.get("FRESHNESS_FLAGS", "").split()),
    ]
    opt_in = {"freshness_bench"}  # runs only when --only names it
    rows = {}
    with open(log_path, "w") as log:
        for name, cmd in benches:
            if only and name not in only and name != "bench_corpus":
                continue
            if name in opt_in and name not in only:
                continue
            rows.update(run(name, cmd, env, a.timeout, log))
        if "publish_build_s" not in rows and (not only or "publish_bench" in only):
            rows.update(time_publish_build(build, work, log))
    load_after = load()

    print("## Issue 20 table (and issue 11's rows)\n")
    print(f"`python3 bench/perf_table.py --build-dir {a.build_dir} --entries {a.entries}` on {time.strftime('%Y-%m-%d')}")
    print(f"Machine: {model}, {cores} cores; load average {load_before} before, {load_after} after.\n")
    print("| measure | target | measured | baselines (same run) | note |")
    print("|---|---|---|---|---|")
    for label, target, rid, f in TABLE:
        rid = rid.format(n=a.entries)
        r = rows.get(rid)
        if r is None:
            print(f"| {label} | {target} | not measured | | |")
            continue
        print(f"| {label} | {target} | {f.format(v=r['value'])} | {fmt_baselines(r)} | {r.get('note', '')} |")
    curve = sorted((k, v) for k, v in rows.items() if k.startswith("verify_per_1000_pages_fp_"))
    if curve:
        print("\nSize / false-positive trade-off (bench/page_load_bench):\n")
        print("| fp target per URL | snapshot | local hits / 1000 pages | verify requests / 1000 pages |")
        print("|---|---|---|---|")
        for k, r in sorted(curve, key=lambda kv: -float(kv[0].rsplit("_", 1)[1])):
            b = r.get("baselines", {})
            print(f"| {k.rsplit('_', 1)[1]} | {b.get('snapshot_MB', 0):.2f} MB | {b.get('local_hits', 0):.1f} | "
                  f"{r['value']:.1f} |")
    extra = sorted(set(rows) - {t[2].format(n=a.entries) for t in TABLE} - {k for k, _ in curve})
    if extra:
        print("\nOther rows: " + "; ".join(f"{k} = {rows[k]['value']:g} {rows[k].get('unit', '')}" for k in extra))
    print(f"\nFull output of every bench: {log_path}")


if __name__ == "__main__":
    main()
