#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
"""`urlguard check -` against DCSO's `bloom check` on the same lines, in the same run.

    python3 bench/cli_bench.py --build-dir build-rel --dir /tmp/urlguard-perf [--runs 3] [--json]

Uses bench_corpus's files in --dir (list.txt, list.ugs, urls.txt, must_hit.txt; run
`BUILD/bench/bench_corpus --out DIR` first, bench/perf_table.py does). Builds DCSO's Bloom filter of list.txt at
p = 1e-4 (DIR/list.bloom, kept between runs), then times, each --runs times with stdin a file and stdout
/dev/null, and keeps the median:
  - `urlguard check --snapshot list.ugs -`           (plain)
  - `urlguard check --json --snapshot list.ugs -`    (JSON)
  - `bloom check list.bloom`                         (DCSO, Debian golang-github-dcso-bloom-cli)
Per line = the whole process (start, open, every line) / lines, wall clock; CPU = user + system of the child
(urlguard looks large inputs up on two threads, so its CPU can exceed its wall time). Then how many of the
must-hit spellings each finds (bloom matches exact strings only).

Rows (--json or URLGUARD_BENCH_JSON=1; bench/perf_table.py reads them):
  cli_plain_us         urlguard check plain, us per line; baselines: dcso_bloom_check_us
  cli_json_us          urlguard check --json, us per line; baselines: cli_plain_us, json_over_plain
  dcso_must_hit_pct    share of must-hit spellings DCSO bloom finds; baselines: urlguard_must_hit_pct
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def run_timed(cmd, stdin_path):
    """Runs cmd with stdin from a file and stdout to /dev/null: (wall s, cpu s, exit code)."""
    with open(stdin_path, "rb") as fin, open(os.devnull, "wb") as fout:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=fin, stdout=fout, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime, p.returncode


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--dir", required=True, help="bench_corpus output directory")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true", default=bool(os.environ.get("URLGUARD_BENCH_JSON")))
    a = ap.parse_args()

    urlguard = os.path.join(a.build_dir, "bin", "urlguard")
    snapshot = os.path.join(a.dir, "list.ugs")
    urls = os.path.join(a.dir, "urls.txt")
    must_hit = os.path.join(a.dir, "must_hit.txt")
    list_txt = os.path.join(a.dir, "list.txt")
    bloom_file = os.path.join(a.dir, "list.bloom")
    entries = count_lines(list_txt)
    if not os.path.exists(bloom_file) or os.path.getmtime(bloom_file) < os.path.getmtime(list_txt):
        subprocess.run(["bloom", "create", "-p", "0.0001", "-n", str(entries), bloom_file + ".tmp"], check=True,
                       stdin=subprocess.DEVNULL)
        with open(list_txt, "rb") as f:
            subprocess.run(["bloom", "insert", bloom_file + ".tmp"], stdin=f, check=True, stdout=subprocess.DEVNULL)
        os.replace(bloom_file + ".tmp", bloom_file)
    lines = count_lines(urls)

    variants = {
        "plain": [urlguard, "check", "--snapshot", snapshot, "-"],
        "json": [urlguard, "check", "--json", "--snapshot", snapshot, "-"],
        "bloom": ["bloom", "check", bloom_file],
    }
    results = {k: [] for k in variants}
    for _ in range(a.runs):  # interleaved, so a busy spell of the machine hits every variant alike
        for name, cmd in variants.items():
            wall, cpu, rc = run_timed(cmd, urls)
            if name != "bloom" and rc & ~1:  # 1 = some local hits (true hits and false positives): fine
                sys.exit(f"cli_bench: {' '.join(cmd)} exited {rc}")
            results[name].append((wall, cpu))
    us = {k: statistics.median(w for w, _ in v) * 1e6 / lines for k, v in results.items()}
    cpu_us = {k: statistics.median(c for _, c in v) * 1e6 / lines for k, v in results.items()}

    total = count_lines(must_hit)
    bloom_found = len(subprocess.run(["bloom", "check", bloom_file], stdin=open(must_hit, "rb"),
                                     capture_output=True, check=True).stdout.splitlines())
    out = subprocess.run([urlguard, "check", "--snapshot", snapshot, "-"], stdin=open(must_hit, "rb"),
                         capture_output=True).stdout.decode("utf-8", "replace").splitlines()
    urlguard_found = sum(1 for l in out if l.startswith("HIT"))
    bloom_pct = 100.0 * bloom_found / total if total else 0.0
    urlguard_pct = 100.0 * urlguard_found / total if total else 0.0

    print(f"{lines} clean URLs against {entries} list entries, median of {a.runs} runs (whole process per line):")
    for k in variants:
        print(f"  {k:6s} {us[k]:.3f} us/line wall, {cpu_us[k]:.3f} us/line CPU")
    print(f"  --json / plain = {us['json'] / us['plain']:.2f}; plain / DCSO bloom = {us['plain'] / us['bloom']:.2f}")
    print(f"must-hit spellings ({total}): DCSO bloom finds {bloom_pct:.1f}%, urlguard {urlguard_pct:.1f}%")
    if a.json:
        rows = [
            {"row": "cli_plain_us", "value": round(us["plain"], 3), "unit": "us",
             "baselines": {"dcso_bloom_check_us": round(us["bloom"], 3)},
             "note": f"{lines} lines, {entries} entries; CPU {cpu_us['plain']:.3f} us/line "
                     f"(bloom {cpu_us['bloom']:.3f})"},
            {"row": "cli_plain_cpu_us", "value": round(cpu_us["plain"], 3), "unit": "us",
             "baselines": {"dcso_bloom_check_cpu_us": round(cpu_us["bloom"], 3)},
             "note": "CPU time (user + system) of the whole process per line; urlguard looks large inputs up on "
                     "two threads, DCSO bloom on one"},
            {"row": "cli_json_us", "value": round(us["json"], 3), "unit": "us",
             "baselines": {"cli_plain_us": round(us["plain"], 3),
                           "json_over_plain": round(us["json"] / us["plain"], 3)},
             "note": f"CPU {cpu_us['json']:.3f} us/line"},
            {"row": "dcso_must_hit_pct", "value": round(bloom_pct, 1), "unit": "%",
             "baselines": {"urlguard_must_hit_pct": round(urlguard_pct, 1)},
             "note": f"{total} must-hit spellings (bench_corpus)"},
        ]
        for r in rows:
            print(json.dumps(r))


if __name__ == "__main__":
    main()
