#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lookups per second from Python (urlguard.Checker.check and check_many) next to the C++ number on the same
snapshot and the same URLs (`urlguard check --timing`: warm ns per lookup, one thread).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_lookup_bench.py --bin build/bin [--entries 100000]

The list and the URLs are generated deterministically (fixed seed): `entries` domains and URLs, and queries that
are 90% clean URLs and 10% listed ones, as a browser or chat backend would see them. Build with
-DCMAKE_BUILD_TYPE=Release for numbers worth quoting (docs/performance.md, docs/python.md).
"""
import argparse
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time

import urlguard


def best_rate(fn, n, repeats):
    """Best-of-`repeats` lookups per second of fn() doing n lookups."""
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = max(best, n / (time.perf_counter() - t0))
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default="build/bin", help="directory of urlguard and urlguard-publish")
    p.add_argument("--entries", type=int, default=100_000, help="list entries")
    p.add_argument("--queries", type=int, default=200_000, help="distinct query URLs")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    bin_dir = pathlib.Path(args.bin)
    rng = random.Random(20260101)

    with tempfile.TemporaryDirectory(prefix="urlguard-pybench.") as tmp:
        tmp = pathlib.Path(tmp)
        entries = []
        for i in range(args.entries):
            host = f"{rng.getrandbits(40):010x}-{i}.bad-{i % 97}.example"
            entries.append(host if i % 2 else f"http://{host}/login/{i}.php")
        (tmp / "list.txt").write_text("\n".join(entries) + "\n")
        snapshot = tmp / "bench.ugs"
        subprocess.run([str(bin_dir / "urlguard-publish"), "build", "--list", "bench", "--input",
                        str(tmp / "list.txt"), "--out", str(snapshot)], check=True, capture_output=True)
        queries = []
        for i in range(args.queries):
            if i % 10 == 0:
                e = entries[rng.randrange(len(entries))]
                queries.append(e if e.startswith("http") else f"https://{e}/some/page?id={i}")
            else:
                queries.append(f"https://www.site-{rng.getrandbits(32):08x}.example.org/articles/{i}/index.html"
                               f"?utm_source=chat&n={i}")
        (tmp / "queries.txt").write_text("\n".join(queries) + "\n")

        checker = urlguard.Checker(snapshot)
        check = checker.check
        n = len(queries)
        hits = sum(v.verdict == "hit" for v in checker.check_many(queries))
        single = best_rate(lambda: [check(u) for u in queries], n, args.repeats)
        batch = best_rate(lambda: checker.check_many(queries), n, args.repeats)
        chunked = best_rate(lambda: [checker.check_many(queries[i:i + 64]) for i in range(0, n, 64)], n,
                            args.repeats)

        # The CLI's warm loop runs about 0.2 s: take the best of `repeats` runs, as for the Python numbers.
        cxx_ns = None
        for _ in range(args.repeats):
            with open(tmp / "queries.txt") as stdin:
                cli = subprocess.run([str(bin_dir / "urlguard"), "check", "--timing", "--snapshot", str(snapshot),
                                      "-"], stdin=stdin, capture_output=True, text=True)
            m = re.search(r"then (\d+) ns per lookup warm", cli.stderr)
            if m and (cxx_ns is None or int(m.group(1)) < cxx_ns):
                cxx_ns = int(m.group(1))

    print(f"snapshot: {args.entries} entries; {n} query URLs ({hits} hits); python {sys.version.split()[0]}; "
          f"urlguard {urlguard.__version__}")
    print(f"{'path':44} {'lookups/s':>12} {'ns/lookup':>10}")
    rows = [("Python Checker.check (one call per URL)", single),
            ("Python Checker.check_many (all URLs)", batch),
            ("Python Checker.check_many (batches of 64)", chunked)]
    if cxx_ns:
        rows.append(("C++ Checker::Check (urlguard check --timing)", 1e9 / cxx_ns))
    for name, rate in rows:
        print(f"{name:44} {rate:12,.0f} {1e9 / rate:10.0f}")


if __name__ == "__main__":
    main()
