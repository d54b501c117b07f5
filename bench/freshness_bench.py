#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
"""freshness_bench: issue 17's benchmark. How long from the moment a feed lists a URL until a client says
`malicious` for it, and what each version costs, with the real binaries on 127.0.0.1.

    bench/freshness_bench.py [--bin build-rel/bin] [--entries 10000000] [--rate 1400] [--interval 60]
                             [--versions 10] [--catchup-versions 60[,1440]] [--clients 2] [--quick] [--json]

What it runs (Python 3 stdlib only; every figure below is measured in this one run):
  1. A list of N generated entries (1/8 domains, 1/8 IPv4 addresses, 3/4 URLs; entry i is a pure function of
     i, so "the oldest entries" are simply the lowest indices) published as version 1 (`publish --input`).
  2. urlguard-server --repo R on 127.0.0.1, and --clients clients (`urlguard sync --once` into a data
     directory of their own, each through a small counting reverse proxy in this script: every request, status
     and body byte a client downloads is recorded, so "downloads after the manifest" and "bytes per minute" do
     not depend on what the client prints).
  3. Ingestion: a feeder thread adds --rate new entries per second (and, so that the list keeps its size,
     removes as many of the oldest), as change files dropped atomically into SPOOL/incoming/ every 0.5 s
     (`T.add`, `T.remove`: write elsewhere, rename in). Its ingestion time is the moment its file is renamed in.
  4. Versions every --interval seconds, --versions of them: with `urlguard-publish loop --spool SPOOL --every
     INTERVAL` when the binary has it (feature-detected with `loop --help`), else this script claims the spool
     files itself and runs `urlguard-publish publish --add --remove` on the cadence (its CPU, wall and peak RSS
     from wait4). With the loop, publisher CPU per version is the loop's /proc CPU time between two commits
     (compaction included). `--manifest-format 2` and a min-wait option are passed when `publish --help`
     lists them. A version's commit time is when this script sees the new manifest.json (polled every 50 ms).
  5. Freshness: every --samples-per-version-th new URL is a sample. Each client syncs when its own schedule
     says (next_attempt_unix of its D/sync-state.json, written by `urlguard sync` with urlguardd's rule, the
     binary's own; where it does not say, at the manifest's pace plus up to 5 %), or every --client-pace
     seconds with the clients spread evenly over the pace, as a fleet is; and
     after each sync runs `urlguard check --verify` over its pending samples; a local hit the verify server
     cannot confirm yet (UNVERIFIED) is asked again every 0.5 s until the next sync. Latency = first MALICIOUS
     minus ingestion, per (sample, client): p50 / p99. A sample never confirmed within the run counts as
     infinitely late (so p99 says "> run" rather than hiding it).
  6. Server pick-up: from each commit, GET /v1/verify every 20 ms until the answer's "lists" names the new
     version (docs/verify-server.md: a server never answers for a version it has not fully loaded).
  7. A change version of --change-entries (default 50 k: half added, half removed) on the list after the live
     run (wall, CPU, peak RSS: deep into an epoch, t up to --checkpoint-changes touched fingerprints); then a
     checkpoint of the list now (`compact`, timed) and the same change again, right after it (t = c); and the
     same on a --ratio-entries list (default 1 M) built in the same run, also the first version after its
     checkpoint: the CPU ratio at equal t, and a projection of its CPU to 1.2 B entries through the two sizes in
     log2(N) (a version's lookups cost c log N, docs/scale.md §7) plus the list's own t term (deep minus right
     after), with the straight line in N beside it as the pessimistic bound.
  8. Catch-up: clients that were away --catchup-versions versions (60 = 1 h, 1440 = 24 h at a 60-s cadence)
     while versions of the live per-version change count are published back to back; then one sync each:
     downloads after the manifest (manifest, signature and list index not counted), bytes, whether a snapshot
     was taken, and the ratio of those bytes to ONE ideal range diff (F, V] of the changes missed (every entry
     touched in (F, V], by its state at V; docs/diff-format.md §7's formula per layer over the exact entry sets,
     scaled by the measured/formula ratio of the publisher's one-version diffs when it reports them) or to the
     snapshot when that is smaller; beside it the ratio to the net diff (what differs between F and V).

Prints a table shaped like issue 17's Targets table, the machine (CPU model, nproc, load average before and
after), and with --json (or URLGUARD_BENCH_JSON=1) one JSON row per measure for bench/perf_table.py:
  freshness_latency_p50_s / _p99_s, freshness_pickup_s, freshness_publish_cpu_s, freshness_publish_wall_s,
  freshness_client_bytes_per_min, freshness_change_wall_s, freshness_change_cpu_s, freshness_change_rss_mb,
  freshness_change_fresh_wall_s, freshness_checkpoint_now_cpu_s, freshness_change_cpu_ratio, freshness_projected_1200m_s, freshness_catchup_<K>_downloads,
  freshness_catchup_<K>_ratio.
--quick: 100 k entries, 200 entries/s, 10-s versions, 5 versions, catch-up 8 versions, client pace = interval,
2 k-entry change version and no ratio list: a smoke run in under 2 minutes, not a measurement.
"""
import argparse
import http.client
import http.server
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import socketserver
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

LIST = "bench"
HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("domain", "ip", "url")
# Requests a client makes before it knows which file it needs: not "downloads after the manifest".
META_FILES = ("manifest.json", "manifest.sig", "index.json", "index.sig")
TICK_SECONDS = 0.5


def log(msg):
    print("freshness_bench: %s %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def loadavg():
    return "%.2f %.2f %.2f" % os.getloadavg()


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return model, os.cpu_count(), mem


# ---- Entries: entry i is a function of i alone (unique for every i >= 0). ----

def kind_of(i):
    k = i % 8
    return "domain" if k == 0 else "ip" if k == 1 else "url"


def entry(i):
    k = i % 8
    if k == 0:
        return "d%d.example" % i
    if k == 1:
        a = (10 << 24) + 1 + i // 8
        return "%d.%d.%d.%d" % (a >> 24 & 255, a >> 16 & 255, a >> 8 & 255, a & 255)
    return "https://site%d.example/a/b?q=%d" % (i, i % 13)


def check_url(i):
    e = entry(i)
    return e if e.startswith("https://") else "http://%s/" % e


def count_kinds(lo, hi):
    """Entries of each kind among indices [lo, hi)."""
    out = {}
    for k, name in enumerate(("domain", "ip")):
        out[name] = max(0, (hi - k + 7) // 8 - (lo - k + 7) // 8) if hi > lo else 0
    out["url"] = max(0, hi - lo) - out["domain"] - out["ip"]
    return out


def write_entries(path, lo, hi):
    with open(path, "w") as f:
        buf = []
        for i in range(lo, hi):
            buf.append(entry(i))
            if len(buf) >= 65536:
                f.write("\n".join(buf) + "\n")
                buf.clear()
        if buf:
            f.write("\n".join(buf) + "\n")


# ---- Processes ----

TIME_BIN = "/usr/bin/time"  # GNU time (Debian package "time")


def rss_measured(cmd, report_path):
    """`cmd` wrapped so that its own peak RSS can be read back (own_peak_rss_mb). The ru_maxrss wait4 gives for a
    child includes the RSS of the process it was forked from (Linux keeps the old memory's high-water mark across
    exec): this script's, a few hundred MB at 100 M entries, which floored every figure below it (a 45 MB first
    sync read as 230 MB in session 16). GNU time forks the command from a process of about 1 MB and writes its
    own %M to report_path. Without GNU time: cmd as is, and wait4's figure (an upper bound)."""
    if os.access(TIME_BIN, os.X_OK):
        return [TIME_BIN, "-f", "%M", "-o", report_path] + cmd
    return cmd


def own_peak_rss_mb(report_path, usage):
    """The peak RSS GNU time wrote (its last line: a failed command's status line comes first), else wait4's."""
    try:
        with open(report_path) as f:
            return int(f.read().split()[-1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return usage.ru_maxrss / 1024.0


def run_rusage(cmd, out_path, env=None):
    """Runs cmd (stdout + stderr to out_path). Returns (rc, wall s, CPU s, peak RSS MB, output text). CPU is
    wait4's (the command's and its descendants'), peak RSS the command's own (rss_measured)."""
    t0 = time.monotonic()
    rss_path = out_path + ".rss"
    with open(out_path, "w") as out:
        p = subprocess.Popen(rss_measured(cmd, rss_path), stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    with open(out_path, errors="replace") as f:
        text = f.read()
    return (os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime,
            own_peak_rss_mb(rss_path, usage), text)


def help_text(cmd):
    try:
        p = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=30)
        return p.returncode, p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired):
        return -1, ""


def proc_cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime, stime, and the CPU of waited-for children (cutime, cstime)
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None


def proc_hwm_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def stop_process(p, timeout=60):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Server:
    def __init__(self, binary, repo, flags, log_path):
        cmd = [binary, "--repo", repo, "--listen", "127.0.0.1:0"] + flags
        log("$ " + " ".join(shlex.quote(c) for c in cmd))
        self.err = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.err, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            stop_process(self.proc)
            raise SystemExit("freshness_bench: urlguard-server did not start: " + line)
        self.url = m.group(1).rstrip("/")
        host_port = self.url.split("//", 1)[1]
        self.host, self.port = host_port.rsplit(":", 1)[0], int(host_port.rsplit(":", 1)[1])

    def stop(self):
        stop_process(self.proc)
        self.err.close()


# ---- A counting reverse proxy between one client and the server ----

class Proxy:
    """Forwards every request to the server and records (time, method, path, status, body bytes)."""

    HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}

    def __init__(self, host, port):
        self.records = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def forward(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in Proxy.HOP}
                conn = http.client.HTTPConnection(host, port, timeout=300)
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                except (OSError, http.client.HTTPException):
                    self.send_error(502)
                    return
                finally:
                    conn.close()
                self.send_response(resp.status, resp.reason)
                for k, v in resp.getheaders():
                    if k.lower() not in Proxy.HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                with proxy.lock:
                    proxy.records.append((time.time(), self.command, self.path, resp.status, len(data)))

            do_GET = do_HEAD = do_POST = forward

        class Threaded(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.httpd = Threaded(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def mark(self):
        with self.lock:
            return len(self.records)

    def since(self, mark):
        with self.lock:
            return list(self.records[mark:])

    def stop(self):
        self.httpd.shutdown()


def downloads_after_manifest(records):
    """(files downloaded after the manifest, their bytes, all bytes, a snapshot was taken)."""
    files = [r for r in records if r[3] in (200, 206) and os.path.basename(r[2].split("?")[0]) not in META_FILES]
    return (len(files), sum(r[4] for r in files), sum(r[4] for r in records),
            any("snapshot" in r[2] for r in files))


# ---- The repository ----

def manifest_path(repo):
    return os.path.join(repo, "public", "v1", "lists", LIST, "manifest.json")


def read_manifest(repo):
    try:
        with open(manifest_path(repo)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


class Features:
    """What the binaries in --bin can do (issue 17 adds some of it while this benchmark lives)."""

    def __init__(self, publish_exe, args):
        _, ph = help_text([publish_exe, "publish"])
        rc, lh = help_text([publish_exe, "loop"])
        self.loop = rc == 0 and "--spool" in lh and args.mode != "publish"
        self.loop_help = lh
        m = re.search(r"--min-wait[-a-z]*", ph)
        self.min_wait_flag = m.group(0) if m else None
        self.manifest_format2 = "--manifest-format" in ph and args.manifest_format != 1
        self.catchup_ratio = "--catchup-ratio" in ph
        # publish --no-checkpoint and compact --if-due: checkpoints beside back-to-back versions, as the loop makes
        # them on its maintenance thread (else each due one is made inside a version: about 2 min at 100 M).
        _, ch = help_text([publish_exe, "compact"])
        self.background_checkpoints = self.manifest_format2 and "--no-checkpoint" in ph and "--if-due" in ch

    def publish_flags(self, interval):
        flags = []
        if self.manifest_format2:
            flags += ["--manifest-format", "2"]
        if self.min_wait_flag:
            flags += [self.min_wait_flag, str(max(60, int(interval)))]  # the publisher's floor is 60 s
        return flags

    def loop_flags(self, interval):
        """publish_flags that `loop --help` lists (the loop sets min_wait_seconds from --every itself)."""
        f = self.publish_flags(interval)
        return [x for i in range(0, len(f), 2) if re.search(re.escape(f[i]) + r"\b", self.loop_help)
                for x in f[i:i + 2]]

    def describe(self):
        return "loop %s, --manifest-format 2 %s, min-wait option %s" % (
            "yes" if self.loop else "no (publish --add --remove per version)",
            "yes" if self.manifest_format2 else "no (format 1)", self.min_wait_flag or "none")


# ---- Ingestion ----

class Feeder:
    """Adds `rate` entries per second (and removes as many of the oldest) as spool files; picks the samples."""

    def __init__(self, spool, n, rate, sample_every):
        self.incoming = os.path.join(spool, "incoming")
        self.tmp = spool.rstrip("/") + "-tmp"  # beside the spool, same file system: rename is atomic
        os.makedirs(self.incoming, exist_ok=True)
        os.makedirs(self.tmp, exist_ok=True)
        self.rate = rate
        self.next_new = n  # next entry index to add
        self.oldest = 0    # lowest index still in the list
        self.sample_every = sample_every
        self.samples = []  # dicts: index, url, t_ingest
        self.lock = threading.Lock()
        self.spool_lock = threading.Lock()  # held while files enter the spool and while they are claimed
        self.stop_event = threading.Event()
        self.seq = 0
        self.thread = None

    def take(self, count):
        """Claims `count` adds and removes without a file (accelerated versions). Returns (add, remove) ranges."""
        with self.lock:
            a = (self.next_new, self.next_new + count)
            r = (self.oldest, self.oldest + count)
            self.next_new += count
            self.oldest += count
            return a, r

    def start(self):
        self.t0 = time.time()
        self.emitted = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_event.wait(TICK_SECONDS):
            self.drop()
        self.drop()

    def drop(self):
        with self.spool_lock:
            self.drop_locked()

    def drop_locked(self):
        now = time.time()
        due = int((now - self.t0) * self.rate) - self.emitted
        if due <= 0:
            return
        (alo, ahi), (rlo, rhi) = self.take(due)
        self.emitted += due
        name = "%012d" % self.seq
        self.seq += 1
        for lo, hi, ext in ((rlo, rhi, "remove"), (alo, ahi, "add")):
            tmp = os.path.join(self.tmp, name + "." + ext)
            write_entries(tmp, lo, hi)
            os.rename(tmp, os.path.join(self.incoming, name + "." + ext))
        t_ingest = time.time()  # the add file is in the spool: the feed has listed these entries
        first = alo + (2 - alo) % self.sample_every  # index % 8 == 2: a URL
        with self.lock:
            for i in range(first, ahi, self.sample_every):
                self.samples.append({"index": i, "url": check_url(i), "t_ingest": t_ingest, "version": None})

    def stop(self):
        self.stop_event.set()
        if self.thread:
            self.thread.join()


def claim_spool(spool, dest_dir, tag):
    """Manual mode: moves every spool file into dest_dir and concatenates them. Returns (add path, remove path)."""
    incoming = os.path.join(spool, "incoming")
    os.makedirs(dest_dir, exist_ok=True)
    names = sorted(os.listdir(incoming))
    add, rem = os.path.join(dest_dir, tag + ".add"), os.path.join(dest_dir, tag + ".remove")
    with open(add, "wb") as fa, open(rem, "wb") as fr:
        for n in names:
            src = os.path.join(incoming, n)
            with open(src, "rb") as f:
                (fa if n.endswith(".add") else fr).write(f.read())
            os.unlink(src)
    return add, rem, len(names)


# ---- Watching commits and the verify server ----

class ManifestWatcher:
    def __init__(self, repo, on_commit):
        self.repo = repo
        self.on_commit = on_commit
        self.commits = {}  # version -> time.time() seen
        self.stop_event = threading.Event()
        m = read_manifest(repo)
        self.version = m["version"] if m else 0
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        last = None
        while not self.stop_event.wait(0.05):
            try:
                st = os.stat(manifest_path(self.repo))
            except OSError:
                continue
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            if key == last:
                continue
            m = read_manifest(self.repo)
            if not m:
                continue
            last = key
            if m["version"] > self.version:
                t = time.time()
                with self.cond:
                    self.version = m["version"]
                    self.commits[m["version"]] = t
                    self.cond.notify_all()
                self.on_commit(m["version"], t, m)

    def wait_version(self, v, timeout):
        with self.cond:
            return self.cond.wait_for(lambda: self.version >= v, timeout)

    def stop(self):
        self.stop_event.set()
        self.thread.join()


def canon_prefixes(urlguard, urls):
    """The 8-hex-digit prefixes and full hashes of each URL's expressions (`urlguard canon --json`)."""
    p = subprocess.run([urlguard, "canon", "--json", "-"], input="\n".join(urls) + "\n", capture_output=True,
                       text=True, timeout=120)
    out = []
    for line in p.stdout.splitlines():
        try:
            j = json.loads(line)
            out.append([e["sha256"] for e in j.get("expressions", [])])
        except (ValueError, KeyError):
            out.append([])
    return out


class PickupProber:
    """From each commit, asks the verify API until its answer names the new version of the list."""

    def __init__(self, server_url, base_hashes, timeout):
        self.server_url = server_url
        self.base_hashes = base_hashes[:20]
        self.timeout = timeout
        self.results = {}  # version -> (seconds after the commit or None, the new sample's hash was found)
        self.threads = []

    def probe(self, version, t_commit, new_hashes=()):
        t = threading.Thread(target=self.run, args=(version, t_commit, list(new_hashes)[:10]), daemon=True)
        self.threads.append(t)
        t.start()

    def run(self, version, t_commit, new_hashes):
        prefixes = sorted({h[:8] for h in self.base_hashes + new_hashes}) or ["00000000"]
        url = self.server_url + "/v1/verify?prefixes=" + ",".join(prefixes)
        while time.time() - t_commit < self.timeout:
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    ans = json.load(r)
                if ans.get("lists", {}).get(LIST, 0) >= version:
                    found = {m.get("sha256") for m in ans.get("matches", [])}
                    self.results[version] = (time.time() - t_commit,
                                             bool(new_hashes) and any(h in found for h in new_hashes))
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        self.results[version] = (None, False)

    def join(self):
        for t in self.threads:
            t.join()


# ---- Clients ----

SYNC_RE = re.compile(r"^%s: (\S+)" % LIST)


class Client:
    def __init__(self, idx, work, bins, server, pub_key, feeder, pace_fn, phase, fixed_pace=False):
        self.idx = idx
        self.data = os.path.join(work, "client%d" % idx)
        self.bins = bins
        self.server = server
        self.pub_key = pub_key
        self.proxy = Proxy(server.host, server.port)
        self.feeder = feeder
        self.pace_fn = pace_fn
        self.fixed_pace = fixed_pace  # --client-pace: pace_fn, not the client's own schedule
        self.phase = phase
        self.seen = {}  # sample index -> first MALICIOUS time
        self.syncs = []  # (time, report line, records)
        self.failures = 0
        self.stop_event = threading.Event()
        self.log = open(os.path.join(work, "client%d.log" % idx), "w")
        self.lock = threading.Lock()

    def sync(self):
        mark = self.proxy.mark()
        t = time.time()
        # Popen + wait4: the sync's own peak RSS (self.last_rss_mb), what a catch-up costs the client in memory.
        rss_path = self.data + ".rss"
        p = subprocess.Popen(rss_measured([self.bins["urlguard"], "sync", "--once", "--data-dir", self.data,
                                           "--server", self.proxy.url, "--public-key", self.pub_key, "--list", LIST],
                                          rss_path),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        timer = threading.Timer(600, p.kill)
        timer.start()
        try:
            out = p.stdout.read()
            p.stdout.close()
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        rc = p.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        self.last_rss_mb = own_peak_rss_mb(rss_path, usage)
        line = " | ".join(l for l in out.splitlines() if l.strip())
        self.log.write("%.3f sync rc %d: %s\n" % (t, rc, line))
        self.log.flush()
        recs = self.proxy.since(mark)
        self.syncs.append((t, line, recs))
        self.failures += rc != 0
        return rc, line, recs

    def check(self, samples):
        if not samples:
            return []
        p = subprocess.run([self.bins["urlguard"], "check", "--data-dir", self.data, "--verify", "--server",
                            self.server.url, "-"], input="".join(s["url"] + "\n" for s in samples),
                           capture_output=True, text=True, timeout=300)
        now = time.time()
        verdicts = {}
        for line in p.stdout.splitlines():
            parts = line.split(None, 2)
            if len(parts) >= 2:
                verdicts[parts[1]] = parts[0]
        malicious, unverified = [], []
        for s in samples:
            v = verdicts.get(s["url"], "")
            if v == "MALICIOUS":
                malicious.append(s)
            elif v == "UNVERIFIED":
                unverified.append(s)
        with self.lock:
            for s in malicious:
                self.seen.setdefault(s["index"], now)
        return unverified

    def pending(self):
        with self.feeder.lock:
            samples = list(self.feeder.samples)
        with self.lock:
            return [s for s in samples if s["index"] not in self.seen]

    def start(self, t0):
        self.t0 = t0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def scheduled(self):
        """When the client's own schedule says its next poll is due: next_attempt_unix in D/sync-state.json
        (docs/sync-protocol.md §3), written by the `urlguard sync` under test with urlguardd's rule; None when
        --client-pace is given or the file does not say."""
        if self.fixed_pace:
            return None
        try:
            with open(os.path.join(self.data, "sync-state.json")) as f:
                lists = json.load(f).get("lists") or []
            return float(lists[0]["next_attempt_unix"]) if lists else None
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None

    def run(self):
        next_sync = self.scheduled()
        if next_sync is None or next_sync < self.t0:
            next_sync = self.t0 + self.phase
        while not self.stop_event.is_set():
            if self.stop_event.wait(max(0.0, next_sync - time.time())):
                break
            self.sync()
            due = self.scheduled()
            next_sync = due if due is not None and due > next_sync else next_sync + max(1.0, self.pace_fn())
            unverified = self.check(self.pending())
            while unverified and time.time() < next_sync - TICK_SECONDS and not self.stop_event.is_set():
                time.sleep(TICK_SECONDS)
                unverified = self.check(unverified)

    def stop(self):
        self.stop_event.set()
        if getattr(self, "thread", None):
            self.thread.join()
        self.proxy.stop()
        self.log.close()


# ---- Diff size (docs/diff-format.md §7) ----

def diff_formula_bytes(adds, removes, universe, counts_at_from):
    """§7's estimate of one diff: per layer a * (log2(U/a) + 1.5) + r * (log2(n/r) + 1.5) bits + fixed bytes."""
    bits, layers = 0.0, 0
    for k in KINDS:
        a, r, u, n = adds.get(k, 0), removes.get(k, 0), universe.get(k, 0), counts_at_from.get(k, 0)
        if a == 0 and r == 0:
            continue
        layers += 1
        if a:
            bits += a * (math.log2(max(u / a, 1.0)) + 1.5)
        if r:
            bits += r * (math.log2(max(n / r, 1.0)) + 1.5)
    return bits / 8 + 34 + len(LIST) + 60 * layers + 32


def range_diff_bytes(absent, present, universe):
    """The same estimate for a range diff (docs/diff-format.md, version 2): absent and present values are both
    Rice-coded over the universe: per layer x * (log2(U/x) + 1.5) bits for x in (absent, present)."""
    bits, layers = 0.0, 0
    for k in KINDS:
        u = universe.get(k, 0)
        xs = [x for x in (absent.get(k, 0), present.get(k, 0)) if x]
        if not xs:
            continue
        layers += 1
        bits += sum(x * (math.log2(max(u / x, 1.0)) + 1.5) for x in xs)
    return bits / 8 + 34 + len(LIST) + 60 * layers + 32


def touched_changes(f_range, v_range):
    """A range diff (F, V]'s absent and present entries: every entry a version in (F, V] touched, by its state at
    V. With this workload's FIFO list: absent = every entry removed in (F, V] (also those added after F), present
    = every entry added in (F, V] and still listed at V."""
    (flo, fhi), (vlo, vhi) = f_range, v_range
    return count_kinds(flo, vlo), count_kinds(max(fhi, vlo), vhi)


def missed_changes(f_range, v_range):
    """Entries added and removed between two versions whose entry sets are index ranges [lo, hi)."""
    (flo, fhi), (vlo, vhi) = f_range, v_range
    return count_kinds(max(fhi, vlo), vhi), count_kinds(flo, min(vlo, fhi))


# ---- Phases ----

def percentile(values, q):
    """Nearest-rank percentile; math.inf entries (never confirmed) sort last."""
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100.0 * len(s)) - 1))]


def publish_cmd(bins, repo, key, extra):
    return [bins["urlguard-publish"], "publish", "--repo", repo, "--key", key, "--list", LIST,
            "--expires-in", "7d"] + extra


def publish_change(bins, repo, key, work, ranges, flags, tag):
    """One `publish --add --remove` of the given index ranges. Returns the rusage tuple and the output."""
    (alo, ahi), (rlo, rhi) = ranges
    add, rem = os.path.join(work, tag + ".add"), os.path.join(work, tag + ".remove")
    write_entries(add, alo, ahi)
    write_entries(rem, rlo, rhi)
    res = run_rusage(publish_cmd(bins, repo, key, ["--add", "plain:" + add, "--remove", "plain:" + rem] + flags),
                     os.path.join(work, tag + ".log"))
    os.unlink(add)
    os.unlink(rem)
    if res[0] != 0:
        raise SystemExit("freshness_bench: publish %s failed (exit %d): %s" % (tag, res[0], res[4][-2000:]))
    return res


DIFF_RE = re.compile(r"diff from version (\d+): (\d+) bytes for (\d+) changed entries")


def last_diff(publish_output, version):
    """(bytes on the wire, changed entries) of the diff from version-1 the publisher reported, or None."""
    for m in DIFF_RE.finditer(publish_output):
        if int(m.group(1)) == version - 1:
            return int(m.group(2)), int(m.group(3))
    return None


def build_list(bins, work, repo, key, n, tag, flags=()):
    feed = os.path.join(work, tag + "-v1.txt")
    t0 = time.monotonic()
    write_entries(feed, 0, n)
    log("%s: %d entries written in %.1f s" % (tag, n, time.monotonic() - t0))
    # The list's format is set by its first (full) version: format 2 needs the flag here (docs/versions.md).
    res = run_rusage(publish_cmd(bins, repo, key, ["--input", "plain:" + feed] + list(flags)),
                     os.path.join(work, tag + "-v1.log"))
    os.unlink(feed)
    if res[0] != 0:
        raise SystemExit("freshness_bench: publish of version 1 failed (exit %d): %s" % (res[0], res[4][-2000:]))
    log("%s: version 1 published: wall %.1f s, CPU %.1f s, peak RSS %.0f MB" % (tag, res[1], res[2], res[3]))
    return res


def live_phase(a, bins, work, repo, key, pub_key, server, feats, r):
    spool = os.path.join(work, "spool")
    per_version = int(a.rate * a.interval)
    sample_every = max(1, per_version // max(1, a.samples_per_version))
    sample_every += (-sample_every) % 8  # a multiple of 8 lands on the same kind every time: URLs (index % 8 == 2)
    feeder = Feeder(spool, a.entries, a.rate, sample_every)
    base = canon_prefixes(bins["urlguard"], [check_url(2)])[0]
    prober = PickupProber(server.url, base, a.pickup_timeout)
    versions = {}  # version -> dict(t_commit, cpu, wall, rss, changes, diff_bytes)
    loop_proc = {"p": None, "cpu": None}

    def on_commit(v, t, m):
        info = versions.setdefault(v, {})
        info["t_commit"] = t
        info["min_wait"] = m.get("min_wait_seconds")
        if loop_proc["p"] is not None:
            cpu = proc_cpu_seconds(loop_proc["p"].pid)
            if cpu is not None and loop_proc["cpu"] is not None:
                info["cpu"] = cpu - loop_proc["cpu"]
            loop_proc["cpu"] = cpu
        with feeder.lock:
            new = [s for s in feeder.samples if s["version"] == v][:1]
            if not new:
                # The loop does not say which spool files a version took; a sample ingested after the previous
                # commit (and a little before this one) is in this version unless the loop claimed early.
                prev = watcher_commits.get(v - 1, t_start_box[0])
                new = [s for s in feeder.samples if prev + 1 < s["t_ingest"] < t - 1][:1]
        prober.probe(v, t, canon_prefixes(bins["urlguard"], [new[0]["url"]])[0] if new else ())

    t_start_box = [time.time()]
    watcher_commits = {}
    watcher = ManifestWatcher(repo, on_commit)
    watcher_commits = watcher.commits
    v1 = watcher.version
    min_wait = {"v": (read_manifest(repo) or {}).get("min_wait_seconds", 1800)}

    def nominal_pace():
        """The pace without its jitter: --client-pace, or the manifest's cadence (at least 60 s) or 30 min."""
        if a.client_pace:
            return a.client_pace
        m = read_manifest(repo)
        mw = (m or {}).get("min_wait_seconds") or min_wait["v"]
        return max(60, mw) if 0 < mw < 1800 else max(mw, 1800)

    def pace():
        if a.client_pace:
            return a.client_pace
        # urlguardd's rule (docs/sync-protocol.md §2, sync/scheduler.h PollDelaySeconds): a minimum wait under
        # 30 min is the cadence c, polled at c plus up to 5 % (c >= 60); else 30 min +- 10 % or the minimum wait.
        c = nominal_pace()
        if c < 1800:
            return c + random.random() * max(1, c // 20)
        return max(c, 1620 + random.random() * 360)

    clients = [Client(c, work, bins, server, pub_key, feeder, pace, 0.0, bool(a.client_pace))
               for c in range(a.clients)]
    for c in clients:  # version 1 from its snapshot (not counted in the bytes per minute)
        rc, line, _ = c.sync()
        if rc != 0:
            raise SystemExit("freshness_bench: first sync failed: " + line)
    log("clients synced version %d; client pace %s s (%s)" % (v1, nominal_pace(), "--client-pace" if a.client_pace else
                                                              "each client's own schedule, urlguardd's rule"))
    loop_log = os.path.join(work, "loop.log")
    # The loop starts its cycles on version 1's cadence by itself (created_unix + k x interval: a restarted loop
    # keeps the cadence clients place their polls on, docs/sync-protocol.md §2), so the run starts at once; a loop
    # that starts a cadence of its own (an older binary) shows here what its restart costs. Publishing with
    # `publish` instead (no loop), this script keeps version 1's cadence itself.
    created1 = (read_manifest(repo) or {}).get("created_unix")
    # The clients take their places before the feed starts (docs/sync-protocol.md §2): a client's first poll after
    # its first sync is at its place after a version due at least c - c/6 later, up to 2c - c/6 after that sync,
    # never sooner than the server's minimum wait. That wait is a new client's, once (a fleet's clients are in
    # their places); counted, it put the first version's samples of one client up to a cycle late, and the p99 of
    # a 10-version run followed where the first syncs fell in the cycle (98.6 s and 125.5 s in two 100 M runs of
    # one session). Each client polls once at its place (nothing new yet), then the feed starts.
    warm_up = (not a.client_pace and nominal_pace() < 1800) and not a.no_warm_up
    if warm_up:
        t_warm = time.time()
        for i, c in enumerate(clients):
            c.phase = (i + 1) * pace() / len(clients)
            c.start(t_warm)
        deadline = t_warm + 2 * nominal_pace() + 60
        while time.time() < deadline and not all(len(c.syncs) >= 2 for c in clients):
            time.sleep(0.5)
        log("clients in their places after %.1f s (each polled once at its place before the feed started)" %
            (time.time() - t_warm))
    if not feats.loop and isinstance(created1, int) and not a.client_pace:
        now = time.time()
        due = created1 + math.ceil((now + 1 - created1) / a.interval) * a.interval
        log("publishing on version 1's cadence, from %.1f s on" % (due - now))
        time.sleep(max(0.0, due - time.time()))
    t_start = time.time()
    t_start_box[0] = t_start
    feeder.start()
    if feats.loop:
        cmd = [bins["urlguard-publish"], "loop", "--repo", repo, "--key", key, "--list", LIST, "--spool", spool,
               "--every", str(int(a.interval)), "--expires-in", "7d"] + feats.loop_flags(a.interval)
        lf = open(loop_log, "w")
        # The full command first; if the loop refuses it at once (an option it does not take, or an interval
        # under its minimum), the required options only; then this script publishes by itself.
        for c in (cmd, cmd[:12]):
            log("$ " + " ".join(shlex.quote(x) for x in c))
            loop_proc["p"] = subprocess.Popen(c, stdout=lf, stderr=subprocess.STDOUT)
            loop_proc["cpu"] = 0.0
            time.sleep(2)
            if loop_proc["p"].poll() is None:
                break
            log("urlguard-publish loop exited at once (%d, see %s)" % (loop_proc["p"].returncode, loop_log))
            loop_proc["p"] = None
        if loop_proc["p"] is None:
            log("publishing with publish --add --remove on the cadence instead")
            feats.loop = False
    if not warm_up:
        for i, c in enumerate(clients):
            c.phase = (i + 1) * pace() / len(clients)
            c.start(t_start)
    target = v1 + a.versions
    try:
        if feats.loop:
            # The feeder stops right after version target-1: version `target` then carries the rest.
            while watcher.version < target - 1:
                if loop_proc["p"].poll() is not None:
                    raise SystemExit("freshness_bench: urlguard-publish loop exited %d (see %s)" %
                                     (loop_proc["p"].returncode, loop_log))
                watcher.wait_version(target - 1, 5)
            feeder.stop()
            while not watcher.wait_version(target, 5):
                if loop_proc["p"].poll() is not None:
                    raise SystemExit("freshness_bench: urlguard-publish loop exited (see %s)" % loop_log)
        else:
            flags = feats.publish_flags(a.interval)
            for k in range(a.versions):
                due = t_start + (k + 1) * a.interval
                time.sleep(max(0.0, due - time.time()))
                if k == a.versions - 1:
                    feeder.stop()
                v = watcher.version + 1
                with feeder.spool_lock:
                    add, rem, nfiles = claim_spool(spool, os.path.join(work, "claimed"), "v%d" % v)
                    with feeder.lock:
                        for s in feeder.samples:
                            if s["version"] is None:
                                s["version"] = v
                rc, wall, cpu, rss, out = run_rusage(
                    publish_cmd(bins, repo, key, ["--add", "plain:" + add, "--remove", "plain:" + rem] + flags),
                    os.path.join(work, "publish-v%d.log" % v))
                if rc != 0:
                    raise SystemExit("freshness_bench: publish of version %d failed (exit %d): %s" %
                                     (v, rc, out[-2000:]))
                watcher.wait_version(v, 10)
                info = versions.setdefault(v, {})
                info.update(cpu=cpu, wall=wall, rss=rss)
                d = last_diff(out, v)
                if d:
                    info["diff_bytes"], info["diff_changes"] = d
                log("version %d: %d spool files, publish wall %.2f s, CPU %.2f s, peak RSS %.0f MB" %
                    (v, nfiles, wall, cpu, rss))
                os.unlink(add)
                os.unlink(rem)
        t_last = time.time()
        # Wait until every client confirmed every sample (or the grace of two paces runs out).
        grace = max(2 * a.interval + 60, min(2 * nominal_pace() + 30, a.max_grace))
        deadline = time.time() + grace
        while time.time() < deadline:
            with feeder.lock:
                n_samples = len(feeder.samples)
            if all(len(c.seen) >= n_samples for c in clients):
                break
            time.sleep(1)
    finally:
        feeder.stop()
        for c in clients:
            c.stop()
        if loop_proc["p"] is not None:
            r["loop_rss_mb"] = proc_hwm_mb(loop_proc["p"].pid)
            stop_process(loop_proc["p"], timeout=300)
            try:
                with open(loop_log, errors="replace") as f:
                    r["loop_ingest_to_commit_s"] = [float(x) for x in
                                                    re.findall(r"ingest-to-commit ([\d.]+) s", f.read())]
            except OSError:
                pass
        prober.join()
        watcher.stop()
    t_end = time.time()

    # Freshness per (sample, client).
    lat = []
    for s in feeder.samples:
        for c in clients:
            t = c.seen.get(s["index"])
            lat.append(t - s["t_ingest"] if t is not None else math.inf)
    r["samples"] = len(feeder.samples)
    r["latencies"] = len(lat)
    r["unconfirmed"] = sum(1 for x in lat if x == math.inf)
    r["latency_p50_s"] = percentile(lat, 50)
    r["latency_p99_s"] = percentile(lat, 99)
    r["latency_max_s"] = max(lat) if lat else None
    r["run_s"] = t_end - t_start
    r["client_pace_s"] = nominal_pace()
    live = {v: i for v, i in versions.items() if v > v1}
    commits = sorted(i["t_commit"] for i in live.values() if "t_commit" in i)
    r["versions"] = len(live)
    r["commit_gaps_s"] = [b - a_ for a_, b in zip(commits, commits[1:])]
    r["publish_cpu_s"] = [i["cpu"] for v, i in sorted(live.items()) if i.get("cpu") is not None]
    r["publish_wall_s"] = [i["wall"] for v, i in sorted(live.items()) if i.get("wall") is not None]
    r["publish_rss_mb"] = [i["rss"] for v, i in sorted(live.items()) if i.get("rss") is not None]
    r["min_wait_seconds"] = [i.get("min_wait") for v, i in sorted(live.items())]
    r["pickup_s"] = [prober.results.get(v, (None, False))[0] for v in sorted(live)]
    r["pickup_found_new"] = sum(1 for v in live if prober.results.get(v, (None, False))[1])
    r["diff_bytes"] = [(i["diff_bytes"], i["diff_changes"]) for v, i in sorted(live.items()) if "diff_bytes" in i]
    # Client bytes per minute over the live run (everything after the first sync: manifests, 304s, diffs).
    per_min = []
    for c in clients:
        b = sum(rec[4] for t, _, recs in c.syncs if t >= t_start for rec in recs)
        per_min.append(b / ((t_last - t_start) / 60.0))
    r["client_bytes_per_min"] = statistics.mean(per_min) if per_min else None
    r["client_syncs"] = [sum(1 for t, _, _ in c.syncs if t >= t_start) for c in clients]
    r["client_sync_failures"] = sum(c.failures for c in clients)
    r["client_snapshots"] = sum(1 for c in clients for t, _, recs in c.syncs if t >= t_start
                                for rec in recs if "snapshot" in rec[2] and rec[3] == 200)
    return feeder


def change_version(a, bins, work, repo, key, feeder, feats, changes, tag):
    """A version of `changes` changes (half added, half removed) on the list: (wall, CPU, peak RSS MB)."""
    ranges = feeder.take(changes // 2)
    res = publish_change(bins, repo, key, work, ranges, feats.publish_flags(a.interval), tag)
    log("%s: %d-change version: wall %.2f s, CPU %.2f s, peak RSS %.0f MB" % (tag, changes, res[1], res[2], res[3]))
    return res[1], res[2], res[3]


def checkpoint_then_change(a, bins, work, repo, key, feeder, feats, changes):
    """A checkpoint of the committed version now (`urlguard-publish compact`, timed: O(N), what the loop's
    maintenance thread runs beside the versions), then the same change as change_version: its epoch holds only
    this version, as the fresh ratio list's does, so the two sizes compare at equal t (docs/scale.md §7).
    Returns ((wall, CPU, RSS) of the checkpoint, (wall, CPU, RSS) of the version), or None without format 2."""
    if not feats.manifest_format2:
        return None
    res = run_rusage([bins["urlguard-publish"], "compact", "--repo", repo, "--list", LIST],
                     os.path.join(work, "checkpoint-now.log"))
    if res[0] != 0:
        log("checkpoint now failed (exit %d): %s" % (res[0], res[4][-500:]))
        return None
    log("checkpoint of the committed version: wall %.1f s, CPU %.1f s, peak RSS %.0f MB" % (res[1], res[2], res[3]))
    return (res[1], res[2], res[3]), change_version(a, bins, work, repo, key, feeder, feats, changes, "change-fresh")


class BackgroundCheckpoints:
    """`urlguard-publish compact --if-due` beside back-to-back versions, one at a time, started after a commit when
    none runs (triggers coalesce, as on the loop's maintenance thread)."""

    def __init__(self, bins, repo, work):
        self.cmd = [bins["urlguard-publish"], "compact", "--repo", repo, "--list", LIST, "--if-due"]
        self.log_path = os.path.join(work, "catchup-checkpoints.log")
        self.proc = None  # kept referenced: a dropped Popen is reaped by the next Popen (subprocess._cleanup)
        self.started = 0
        self.made = 0
        self.cpu = []  # CPU seconds of each run that made a checkpoint

    def _reap(self, block):
        if self.proc is None:
            return
        pid, status, usage = os.wait4(self.proc.pid, 0 if block else os.WNOHANG)
        if pid == 0:
            return
        self.proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        self.proc = None
        self.out.close()
        with open(self.log_path, errors="replace") as f:
            f.seek(self.run_offset)  # this run's output only
            text = f.read()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit("freshness_bench: compact --if-due failed (see %s)" % self.log_path)
        if ": made version " in text:  # "LIST: made version V a checkpoint ..."
            self.made += 1
            self.cpu.append(usage.ru_utime + usage.ru_stime)

    def after_commit(self):
        self._reap(False)
        if self.proc is None:
            self.out = open(self.log_path, "a")
            self.run_offset = self.out.tell()
            self.proc = subprocess.Popen(self.cmd, stdout=self.out, stderr=subprocess.STDOUT)
            self.started += 1

    def catch_up(self):
        """Waits for the run in progress, then runs once more and waits: the checkpoints as they stand in real time,
        where a checkpoint (20 s at 10 M, about 2 min at 100 M) keeps pace with versions a minute apart; back to back
        (a version every 1-5 s) they fall behind by dozens of versions. Returns the seconds waited."""
        t0 = time.monotonic()
        self._reap(True)
        self.after_commit()
        self._reap(True)
        return time.monotonic() - t0

    def finish(self):
        self._reap(True)


def catchup_phase(a, bins, work, repo, key, pub_key, server, feeder, feats, r):
    per_version = int(a.rate * a.interval)
    points = sorted(set(a.catchup))
    if not points:
        return
    clients = {}
    for k in points:
        c = Client(100 + k, work, bins, server, pub_key, feeder, lambda: 0, 0)
        rc, line, _ = c.sync()
        if rc != 0:
            raise SystemExit("freshness_bench: catch-up client's first sync failed: " + line)
        clients[k] = c
        # A new client's sync (the checkpoint snapshot and the diff from it): the memory a catch-up compares with.
        r.setdefault("first_sync_rss_mb", []).append(c.last_rss_mb)
        log("catch-up client %d: first sync (%s) peaked at %.0f MB RSS" % (k, line[:80], c.last_rss_mb))
    m = read_manifest(repo)
    f_version = m["version"]
    with feeder.lock:
        f_range = (feeder.oldest, feeder.next_new)
    f_counts = dict(m.get("entries", {}))
    flags = feats.publish_flags(a.interval)
    checkpoints = None
    if feats.background_checkpoints:
        flags = flags + ["--no-checkpoint"]
        checkpoints = BackgroundCheckpoints(bins, repo, work)
        log("catch-up: checkpoints made beside the versions (compact --if-due), as the loop makes them")
    cpu, wall, calib = [], [], []
    done = 0
    for k in points:
        while done < k:
            if checkpoints and done == k - 1:
                # The version the client comes back to adopts the checkpoints as real time would have them.
                log("catch-up: waited %.1f s for the checkpoints beside the versions to catch up" %
                    checkpoints.catch_up())
            v = f_version + done + 1
            ranges = feeder.take(per_version)
            res = publish_change(bins, repo, key, work, ranges, flags, "catchup-v%d" % v)
            wall.append(res[1])
            cpu.append(res[2])
            d = last_diff(res[4], v)
            if d:
                calib.append(d[0])
            if checkpoints:
                checkpoints.after_commit()
            done += 1
            if done % 10 == 0 or done == k:
                log("catch-up: %d/%d versions published back to back (last: wall %.2f s, CPU %.2f s)" %
                    (done, points[-1], res[1], res[2]))
        mv = read_manifest(repo)
        with feeder.lock:
            v_range = (feeder.oldest, feeder.next_new)
        c = clients[k]
        rc, line, recs = c.sync()
        n_files, file_bytes, all_bytes, snapshot = downloads_after_manifest(recs)
        adds, removes = missed_changes(f_range, v_range)
        ideal = diff_formula_bytes(adds, removes, mv.get("universe", {}), f_counts)
        absent, present = touched_changes(f_range, v_range)
        ideal_range = range_diff_bytes(absent, present, mv.get("universe", {}))
        # Scale the formula by what the publisher's one-version diffs really cost against it.
        one = diff_formula_bytes(count_kinds(0, per_version), count_kinds(0, per_version), mv.get("universe", {}),
                                 mv.get("entries", {}))
        scale = (statistics.median(calib[-5:]) / one) if calib else 1.0
        snap = (mv.get("checkpoint", {}).get("snapshot") or mv.get("snapshot") or {}).get("size")
        ideal_scaled = ideal * scale
        range_scaled = ideal_range * scale
        bound = min(range_scaled, snap) if snap else range_scaled
        net_bound = min(ideal_scaled, snap) if snap else ideal_scaled
        r.setdefault("catchup", {})[k] = {
            "from": f_version, "to": mv["version"], "rc": rc, "report": line, "downloads": n_files,
            "bytes": file_bytes, "all_bytes": all_bytes, "snapshot": snapshot, "ideal_diff_bytes": range_scaled,
            "net_diff_bytes": ideal_scaled, "formula_bytes": ideal, "scale": scale, "snapshot_bytes": snap,
            "ratio": file_bytes / bound if bound else None,
            "net_ratio": file_bytes / net_bound if net_bound else None,
            "changes_missed": sum(adds.values()) + sum(removes.values()), "client_rss_mb": c.last_rss_mb,
            "files": [rec[2] for rec in recs if rec[3] in (200, 206)]}
        log("catch-up after %d versions: sync exit %d, %d downloads after the manifest, %d bytes (one range diff "
            "%.0f, one net diff %.0f, snapshot %s), snapshot taken: %s, the sync's peak RSS %.0f MB" %
            (k, rc, n_files, file_bytes, range_scaled, ideal_scaled, snap, snapshot, c.last_rss_mb))
    for c in clients.values():
        c.stop()
    if checkpoints:
        checkpoints.finish()
        r["catchup_checkpoints"] = {"made": checkpoints.made, "runs": checkpoints.started, "cpu_s": checkpoints.cpu}
        log("catch-up: %d checkpoints made beside the versions (%d compact --if-due runs; CPU each: %s)" %
            (checkpoints.made, checkpoints.started, ", ".join("%.1f s" % c for c in checkpoints.cpu)))
    r["catchup_publish_cpu_s"] = cpu
    r["catchup_publish_wall_s"] = wall


# ---- Report ----

def fmt_s(v):
    if v is None:
        return "-"
    if v == math.inf:
        return "never (within the run)"
    return "%.2f s" % v if v < 10 else "%.1f s" % v


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def label(n):
    return "%g M" % (n / 1e6) if n >= 10**6 else "%g k" % (n / 1e3)


def report(a, r, feats):
    n = a.entries
    rows = []  # (measure, target, measured text, json row or None)

    def row(rid, value, unit, measure, target, text, baselines=None, note=""):
        j = None
        if value is not None and value != math.inf:
            j = {"row": rid, "value": round(value, 4), "unit": unit, "baselines": baselines or {},
                 "note": "; ".join(x for x in (measure.strip(), note, r["run_desc"]) if x)}
        rows.append((measure, target, text, j))

    cw = r.get("change")
    cf = r.get("change_fresh")
    if cw:
        row("freshness_change_wall_s", cw[0], "s", "%d k-change version, %s list, wall (deep into an epoch: as the "
            "live run left it)" % (a.change_entries // 1000, label(n)), "<= 1 s at 10 M, <= 3 s at 100 M",
            fmt_s(cw[0]) + " (CPU %s)" % fmt_s(cw[1]), {"cpu_s": round(cw[1], 3)},
            "publish --add --remove of %d entries each" % (a.change_entries // 2))
        row("freshness_change_rss_mb", cw[2], "MB", "its peak RSS", "<= 1 GB at 100 M", "%.0f MB" % cw[2])
    if cf:
        row("freshness_change_fresh_wall_s", cf[0], "s", "the same right after a checkpoint (t = c)",
            "<= 1 s at 10 M, <= 3 s at 100 M", "%s (CPU %s, peak RSS %.0f MB)" % (fmt_s(cf[0]), fmt_s(cf[1]), cf[2]),
            {"cpu_s": round(cf[1], 3), "rss_mb": round(cf[2])})
        ck = r.get("checkpoint_now")
        row("freshness_checkpoint_now_cpu_s", ck[1], "s", "a checkpoint of the %s list (compact: O(N), beside "
            "publishing)" % label(n), "", "CPU %s, wall %s, peak RSS %.0f MB" % (fmt_s(ck[1]), fmt_s(ck[0]), ck[2]))
    cr = r.get("change_ratio")
    if cr and cw:
        # Like for like: the ratio list's version is the first after its checkpoint, so the list's version right
        # after one (t = c) is its counterpart; without it (no format 2), the deep one, which carries t.
        same = cf or cw
        ratio = same[1] / cr[1] if cr[1] else None
        row("freshness_change_cpu_ratio", ratio, "x", "its CPU at %s over its CPU at %s%s" % (
            label(n), label(a.ratio_entries), ", both right after a checkpoint" if cf else " (t differs)"),
            "<= 1.5x (10 M over 1 M)", "%.2fx (%.2f s / %.2f s)" % (ratio, same[1], cr[1]),
            {"cpu_%s_s" % label(a.ratio_entries).replace(" ", ""): round(cr[1], 3)})
        # A version costs c log N for its lookups plus a term in t, the fingerprints touched since the checkpoint,
        # which does not grow with N (docs/scale.md §7). The projection: the line through the two sizes in log2(N)
        # at equal t, plus the list's own t term (deep minus fresh: what its epoch adds). The straight line in N
        # is printed beside it as the pessimistic bound.
        epoch = max(0.0, cw[1] - cf[1]) if cf else 0.0
        per_doubling = (same[1] - cr[1]) / (math.log2(n) - math.log2(a.ratio_entries))
        proj = same[1] + per_doubling * (math.log2(1.2e9) - math.log2(n)) + epoch
        slope = (same[1] - cr[1]) / (n - a.ratio_entries)
        linear = cr[1] + slope * (1.2e9 - a.ratio_entries) + epoch
        row("freshness_projected_1200m_s", proj, "s", "projected version CPU at 1.2 B entries, %d k changes" %
            (a.change_entries // 1000), "<= 10 s, with the formula",
            "%s = %.2f s + %.3f s x log2(1.2 B / %s) (c log N through the two sizes) + %.2f s (the epoch's t "
            "term); a straight line in N: %s" % (fmt_s(proj), same[1], per_doubling, label(n), epoch,
                                                 fmt_s(linear)),
            {"per_doubling_s": round(per_doubling, 4), "linear_in_n_s": round(linear, 3),
             "epoch_term_s": round(epoch, 3)},
            "fit of the change version's CPU in log2(N) through %s and %s" % (label(a.ratio_entries), label(n)))
    pk = [x for x in r.get("pickup_s", [])]
    got = [x for x in pk if x is not None]
    if pk:
        text = "median %s, max %s over %d versions" % (fmt_s(med(got)), fmt_s(max(got)) if got else "-", len(pk))
        if len(got) < len(pk):
            text += "; %d versions not answered for within %d s" % (len(pk) - len(got), a.pickup_timeout)
        text += "; a new entry of the version found in %d of them" % r.get("pickup_found_new", 0)
        row("freshness_pickup_s", med(got) if len(got) == len(pk) else None, "s",
            "verify server answering for a new version after its commit", "<= 5 s", text,
            {"max_s": round(max(got), 3)} if got else {}, "GET /v1/verify until \"lists\" names the version")
    p50, p99 = r.get("latency_p50_s"), r.get("latency_p99_s")
    if p99 is not None:
        text = "p50 %s, p99 %s (%d samples x %d clients, %d never confirmed; client pace %s s)" % (
            fmt_s(p50), fmt_s(p99), r["samples"], a.clients, r["unconfirmed"], r["client_pace_s"])
        if r["client_pace_s"] > r["run_s"] / 2:
            text += "; the pace is not short of the run: most samples cannot be confirmed in it"
        row("freshness_latency_p99_s", p99, "s", "ingestion -> client `malicious`, p99, %g entries/s, %g-s versions"
            % (a.rate, a.interval), "<= 120 s", text, {"p50_s": round(p50, 3) if p50 not in (None, math.inf)
                                                      else None}, "client pace %s s" % r["client_pace_s"])
        row("freshness_latency_p50_s", p50, "s", "ingestion -> client `malicious`, p50", "(median)", fmt_s(p50))
    for k, c in sorted(r.get("catchup", {}).items()):
        secs = k * a.interval
        away = "%.3g h" % (secs / 3600.0) if secs >= 3600 else "%.3g min" % (secs / 60.0)
        text = "%d downloads, %s bytes = %.2fx %s; %.2fx one net diff (%d changes missed; snapshot %s%s)" % (
            c["downloads"], "{:,}".format(c["bytes"]), c["ratio"] or 0,
            "the snapshot" if c["snapshot_bytes"] and c["snapshot_bytes"] < c["ideal_diff_bytes"] else
            "one range diff (%s bytes)" % "{:,.0f}".format(c["ideal_diff_bytes"]), c["net_ratio"] or 0,
            c["changes_missed"], "taken" if c["snapshot"] else "not taken",
            "; SYNC FAILED, exit %d" % c["rc"] if c["rc"] else "")
        if c.get("client_rss_mb") is not None:
            text += "; the client's sync peaked at %.0f MB RSS" % c["client_rss_mb"]
            if r.get("first_sync_rss_mb"):
                text += " (a new client's first sync: %.0f MB)" % max(r["first_sync_rss_mb"])
        row("freshness_catchup_%d_ratio" % k, c["ratio"], "x", "client away %s (%d versions): downloads after "
            "the manifest / bytes over one diff of its changes" % (away, k), "<= 2 / <= 1.3x", text,
            {"downloads": c["downloads"], "bytes": c["bytes"], "ideal_diff_bytes": round(c["ideal_diff_bytes"]),
             "over_net_diff": round(c["net_ratio"] or 0, 3), "snapshot_taken": int(c["snapshot"]),
             "client_rss_mb": round(c["client_rss_mb"]) if c.get("client_rss_mb") is not None else None},
            "one sync after %d versions published back to back" % k)
        row("freshness_catchup_%d_downloads" % k, c["downloads"], "", "  downloads after the manifest", "<= 2",
            str(c["downloads"]))
    cpu = r.get("publish_cpu_s", [])
    if cpu:
        row("freshness_publish_cpu_s", med(cpu), "s", "publisher CPU per version (live, %d changes)" %
            (2 * int(a.rate * a.interval)), "(follows the changes)", "median %s, max %s" % (fmt_s(med(cpu)),
                                                                                             fmt_s(max(cpu))),
            {"max_s": round(max(cpu), 3)}, "loop CPU between commits" if feats.loop else "wait4 of publish")
    wall = r.get("publish_wall_s", [])
    if wall:
        row("freshness_publish_wall_s", med(wall), "s", "publisher wall per version (live)", "< the interval",
            "median %s, max %s" % (fmt_s(med(wall)), fmt_s(max(wall))), {"max_s": round(max(wall), 3)})
    itc = r.get("loop_ingest_to_commit_s")
    if itc:
        row("freshness_loop_ingest_to_commit_s", med(itc), "s", "oldest spool file -> commit (the loop's report)",
            "<= the interval + publish", "median %s, max %s" % (fmt_s(med(itc)), fmt_s(max(itc))),
            {"max_s": max(itc)})
    if r.get("loop_rss_mb"):
        row("freshness_loop_rss_mb", r["loop_rss_mb"], "MB", "publisher loop peak RSS (live)", "<= 1 GB at 100 M",
            "%.0f MB" % r["loop_rss_mb"])
    rss = r.get("publish_rss_mb", [])
    if rss:
        row("freshness_publish_rss_mb", max(rss), "MB", "publisher peak RSS per version (live), max",
            "<= 1 GB at 100 M", "%.0f MB" % max(rss))
    gaps = r.get("commit_gaps_s", [])
    if gaps:
        row("freshness_commit_gap_s", med(gaps), "s", "time between commits", "= --interval %g s" % a.interval,
            "median %s, max %s" % (fmt_s(med(gaps)), fmt_s(max(gaps))))
    if r.get("client_bytes_per_min") is not None:
        row("freshness_client_bytes_per_min", r["client_bytes_per_min"], "B", "client bytes per minute (live)",
            "(~2 B per change)", "{:,.0f} B/min ({} syncs, {} failed; {} snapshots)".format(
                r["client_bytes_per_min"], "/".join(map(str, r["client_syncs"])), r["client_sync_failures"],
                r["client_snapshots"]))
    cu = r.get("catchup_publish_cpu_s", [])
    if cu:
        row("freshness_catchup_publish_cpu_s", med(cu), "s", "publisher CPU per version, back to back",
            "(follows the changes)", "median %s over %d versions" % (fmt_s(med(cu)), len(cu)))
    ck = r.get("catchup_checkpoints")
    if ck and ck["cpu_s"]:
        row("freshness_checkpoint_cpu_s", med(ck["cpu_s"]), "s", "checkpoint CPU (beside the versions, back to back)",
            "(O(N), beside publishing)", "median %s, %d made" % (fmt_s(med(ck["cpu_s"])), ck["made"]))

    print("## Freshness benchmark (issue 17)\n")
    print("`%s` on %s" % (" ".join(shlex.quote(x) for x in r["argv"]), time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                      time.gmtime())))
    print("Machine: %s, %d cores (nproc), %.0f GiB; load average %s before, %s after." % (
        r["model"], r["cores"], r["mem"] / 2**30, r["load_before"], r["load_after"]))
    print("Binaries: %s. %s.\n" % (feats.describe(), r["run_desc"]))
    print("| measure | target | measured |")
    print("|---|---|---|")
    for measure, target, text, _ in rows:
        print("| %s | %s | %s |" % (measure, target, text))
    if a.json:
        for _, _, _, j in rows:
            if j is not None:
                print(json.dumps(j))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(HERE)
    ap.add_argument("--bin", default=os.path.join(root, "build-rel", "bin"),
                    help="directory with urlguard, urlguard-publish, urlguard-server")
    ap.add_argument("--work", default="/tmp/urlguard-freshness", help="scratch directory (emptied first)")
    ap.add_argument("--entries", type=int, default=10_000_000)
    ap.add_argument("--rate", type=float, default=1400, help="new entries per second (as many removed)")
    ap.add_argument("--interval", type=float, default=60, help="seconds between versions")
    ap.add_argument("--versions", type=int, default=10, help="live versions after version 1")
    ap.add_argument("--samples-per-version", type=int, default=50)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--client-pace", type=float, default=0,
                    help="seconds between a client's syncs (default: the manifest's min_wait_seconds)")
    ap.add_argument("--catchup-versions", default="60",
                    help="comma-separated away times in versions (60 = 1 h, 1440 = 24 h at 60 s); empty: skip")
    ap.add_argument("--change-entries", type=int, default=50_000, help="changes of the change version")
    ap.add_argument("--ratio-entries", type=int, default=1_000_000,
                    help="list size of the change version's baseline (0: skip)")
    ap.add_argument("--mode", choices=("auto", "loop", "publish"), default="auto",
                    help="auto: `urlguard-publish loop` when it exists, else publish per version")
    ap.add_argument("--manifest-format", type=int, choices=(1, 2), default=2,
                    help="2: pass --manifest-format 2 when publish has it")
    ap.add_argument("--pickup-timeout", type=int, default=300)
    ap.add_argument("--max-grace", type=float, default=600,
                    help="after the last version, wait at most this long for clients to confirm every sample")
    ap.add_argument("--server-flags", default="--throttle 59 --max-requests-per-second 0 --workers 2")
    ap.add_argument("--quick", action="store_true", help="smoke run (100 k entries, 5 versions, < 2 min)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--no-warm-up", action="store_true",
                    help="start the feed right after the clients' first sync, not once each has polled at its "
                         "place (a new client's first wait, up to 2c once, then counts in the latencies)")
    ap.add_argument("--json", action="store_true", default=os.environ.get("URLGUARD_BENCH_JSON") == "1")
    ap.add_argument("--raw", help="also write every measurement to this JSON file")
    a = ap.parse_args()
    if a.quick:
        a.entries, a.rate, a.interval, a.versions = 100_000, 200, 10, 5
        a.catchup_versions, a.change_entries, a.ratio_entries = "8", 2000, 0
        a.client_pace = a.client_pace or a.interval
        a.samples_per_version = min(a.samples_per_version, 20)
    a.catchup = [int(x) for x in a.catchup_versions.split(",") if x.strip()]
    per_version = int(a.rate * a.interval)
    if per_version > a.entries // 10 or a.change_entries // 2 > a.entries // 10:
        raise SystemExit("freshness_bench: a version would remove more than 10%% of the list (the publication "
                         "guard's default): lower --rate/--interval/--change-entries or raise --entries")

    bins = {b: os.path.join(a.bin, b) for b in ("urlguard", "urlguard-publish", "urlguard-server")}
    for b, p in bins.items():
        if not os.access(p, os.X_OK):
            raise SystemExit("freshness_bench: %s not found at %s (build it, or pass --bin)" % (b, p))
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    need = a.entries * 200
    if shutil.disk_usage(work).free < need:
        raise SystemExit("freshness_bench: %s has %.1f GB free, need about %.1f GB" %
                         (work, shutil.disk_usage(work).free / 1e9, need / 1e9))
    model, cores, mem = machine()
    r = {"argv": ["bench/freshness_bench.py"] + sys.argv[1:], "model": model, "cores": cores, "mem": mem,
         "load_before": loadavg()}
    feats = Features(bins["urlguard-publish"], a)
    r["run_desc"] = "%s entries, %g new entries/s (as many removed), %g-s versions x %d, %d clients" % (
        label(a.entries), a.rate, a.interval, a.versions, a.clients)
    log("binaries: " + feats.describe())

    subprocess.run([bins["urlguard-publish"], "keygen", "--out", os.path.join(work, "keys")], check=True,
                   stdout=subprocess.DEVNULL)
    key = os.path.join(work, "keys", "urlguard-ed25519.pem")
    pub_key = os.path.join(work, "keys", "urlguard-ed25519.pub.pem")
    repo = os.path.join(work, "repo")
    r["v1"] = build_list(bins, work, repo, key, a.entries, "main", feats.publish_flags(a.interval))
    server = Server(bins["urlguard-server"], repo, shlex.split(a.server_flags), os.path.join(work, "server.log"))
    try:
        feeder = live_phase(a, bins, work, repo, key, pub_key, server, feats, r)
        log("live run done: %d versions, p50 %s, p99 %s" % (r["versions"], fmt_s(r["latency_p50_s"]),
                                                             fmt_s(r["latency_p99_s"])))
        r["change"] = change_version(a, bins, work, repo, key, feeder, feats, a.change_entries, "change")
        fresh = checkpoint_then_change(a, bins, work, repo, key, feeder, feats, a.change_entries)
        if fresh:
            r["checkpoint_now"], r["change_fresh"] = fresh
        try:
            catchup_phase(a, bins, work, repo, key, pub_key, server, feeder, feats, r)
        except (Exception, SystemExit) as e:  # the live run's figures are still reported, and the run fails
            log("catch-up failed: %r" % (e,))
            r["catchup_error"] = repr(e)
    finally:
        server.stop()
    if a.ratio_entries and a.change_entries // 2 > a.ratio_entries // 10:
        log("--ratio-entries %d is too small for a %d-change version (the guard refuses removing more than 10%%):"
            " no ratio" % (a.ratio_entries, a.change_entries))
    elif a.ratio_entries and a.ratio_entries < a.entries:
        repo2 = os.path.join(work, "repo-ratio")
        build_list(bins, work, repo2, key, a.ratio_entries, "ratio", feats.publish_flags(a.interval))
        small = Feeder(os.path.join(work, "spool-ratio"), a.ratio_entries, 0, 8)
        r["change_ratio"] = change_version(a, bins, work, repo2, key, small, feats, a.change_entries, "ratio-change")
        shutil.rmtree(repo2, ignore_errors=True)
    r["load_after"] = loadavg()
    if a.raw:
        with open(a.raw, "w") as f:
            json.dump(r, f, indent=1, default=str)
    report(a, r, feats)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    if r.get("catchup_error"):
        raise SystemExit("freshness_bench: the catch-up failed (above): " + r["catchup_error"])


if __name__ == "__main__":
    main()
