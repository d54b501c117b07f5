# SPDX-License-Identifier: Apache-2.0
"""Fixtures of the Python binding tests: real snapshot files built by the real urlguard-publish, the real CLI
for reference output, and a real urlguard-server on 127.0.0.1 (python/CMakeLists.txt sets the environment)."""
import json
import os
import pathlib
import signal
import subprocess
import tempfile

import pytest

BIN = pathlib.Path(os.environ.get("URLGUARD_BIN_DIR", "build/bin"))
SRC = pathlib.Path(os.environ.get("URLGUARD_SOURCE_DIR", "."))


def run(*args, check=True, stdin=None):
    """Runs a urlguard binary from build/bin; returns the CompletedProcess (text)."""
    proc = subprocess.run([str(BIN / args[0]), *map(str, args[1:])], input=stdin, capture_output=True,
                          text=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}: {proc.stderr}")
    return proc


def cli_json_lines(*args, stdin=None):
    """`urlguard ARGS --json`: one parsed JSON object per output line (any exit status)."""
    proc = run("urlguard", *args, check=False, stdin=stdin)
    assert proc.returncode in (0, 1, 2, 3), proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line]


@pytest.fixture(scope="session")
def workdir():
    base = os.environ.get("URLGUARD_TEST_TMPDIR")
    if base:
        os.makedirs(base, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="python_test.", dir=base) as d:
        yield pathlib.Path(d)


@pytest.fixture(scope="session")
def snapshots(workdir):
    """phishing.ugs and malware.ugs from fixtures/lists, built with `urlguard-publish build`."""
    out = []
    for name in ("phishing", "malware"):
        path = workdir / f"{name}.ugs"
        run("urlguard-publish", "build", "--list", name, "--input", SRC / "fixtures" / "lists" / f"{name}.txt",
            "--out", path)
        out.append(path)
    return out


@pytest.fixture(scope="session")
def checker(snapshots):
    import urlguard
    return urlguard.Checker(snapshots)


@pytest.fixture(scope="session")
def server(workdir):
    """A signed repository (keygen + publish of both fixture lists at a 1% filter rate) served by urlguard-server
    on 127.0.0.1 (a free port). Yields (base URL, public key PEM path, repo dir)."""
    keys = workdir / "keys"
    repo = workdir / "repo"
    run("urlguard-publish", "keygen", "--out", keys)
    key = keys / "urlguard-ed25519.pem"
    for name in ("phishing", "malware"):
        run("urlguard-publish", "publish", "--repo", repo, "--key", key, "--list", name, "--input",
            SRC / "fixtures" / "lists" / f"{name}.txt", "--fp-rate", "0.01")
    # In a process group of its own (start_new_session), stopped with the whole group (tests/child_process.h).
    proc = subprocess.Popen([str(BIN / "urlguard-server"), "--repo", str(repo), "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:"), (line, proc.stderr.read() if proc.poll() else "")
        yield line.split()[-1], keys / "urlguard-ed25519.pub.pem", repo
    finally:
        stop_group(proc)


def stop_group(proc):
    """SIGTERM to the process group `proc` leads, up to 30 s for it to exit, then SIGKILL to what is left of the
    group; `proc` is reaped."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
