# SPDX-License-Identifier: Apache-2.0
"""urlguard.Checker against snapshot files built by the real publisher; verdicts compared with the CLI's JSON."""
import concurrent.futures
import json
import os
import threading

import pytest

import urlguard
from conftest import cli_json_lines

HITS = [
    ("http://evil.example/", "phishing", "domain", "evil.example/"),
    ("https://a.b.evil.example/any/path?q=1", "phishing", "domain", "evil.example/"),
    ("HTTP://Secure-Bank.EXAMPLE/login.php#form", "phishing", "url", "secure-bank.example/login.php"),
    ("http://downloads.example/setup.exe", "malware", "url", "downloads.example/setup.exe"),
    ("http://0xC6.51.100.23/payload", "malware", "ip", "198.51.100.0/24"),
    ("http://[2001:db8:bad::1]/x", "malware", "ip", "2001:db8:bad::/48"),
]
SAFE = ["https://www.wikipedia.org/", "http://example.com/index.html", "http://secure-bank.example/other.php",
        "notevil.example"]
INVALID = ["javascript:alert(1)", "http://", "mailto:someone@example.com", "x" * 9000]


def test_version():
    assert urlguard.__version__.count(".") == 2
    major, minor, patch = (int(p) for p in urlguard.__version__.split("."))
    assert (major, minor, patch) >= (0, 1, 0)


@pytest.mark.parametrize("url,list_name,layer,expression", HITS)
def test_hits(checker, url, list_name, layer, expression):
    v = checker.check(url)
    assert v.verdict == "hit", v
    assert (v.list, v.layer, v.expression) == (list_name, layer, expression)
    assert v.sha256 == urlguard.expression_sha256(expression)
    assert v.list_version == 1
    assert v.matches[0] == urlguard.Match(list_name, layer, expression, v.sha256, 1)
    assert v.error is None and not v.stale and not v.allowlisted
    assert v.input == url
    assert "hit" in repr(v) and expression in repr(v)


@pytest.mark.parametrize("url", SAFE)
def test_safe(checker, url):
    v = checker.check(url)
    assert v.verdict == "safe", v
    assert v.list is None and v.layer is None and v.matches == [] and v.error is None


@pytest.mark.parametrize("url", INVALID)
def test_invalid(checker, url):
    v = checker.check(url)
    assert v.verdict == "invalid", v
    assert v.error and v.matches == []


def test_bytes_input(checker):
    v = checker.check(b"http://evil.example/")
    assert v.verdict == "hit" and v.input == b"http://evil.example/"
    with pytest.raises(TypeError):
        checker.check(42)


def test_verdicts_equal_cli_json(checker, snapshots):
    urls = [h[0] for h in HITS] + SAFE + INVALID[:3] + ["http://münchen-bank.example/konto"]
    args = ["check", "--json"]
    for s in snapshots:
        args += ["--snapshot", s]
    cli = cli_json_lines(*args, "-", stdin="\n".join(urls) + "\n")
    assert len(cli) == len(urls)
    for url, expected in zip(urls, cli):
        v = checker.check(url, canonical=True)
        assert v.to_dict() == expected, url
        assert json.loads(v.to_json()) == expected
        assert v.canonical == expected["canonical"]


def test_check_many_equals_check(checker):
    urls = [h[0] for h in HITS] + SAFE + INVALID + [b"http://evil.example/"]
    many = checker.check_many(iter(urls), canonical=True)
    assert [v.to_dict() for v in many] == [checker.check(u, canonical=True).to_dict() for u in urls]
    assert checker.check_many([]) == []


def test_host_and_ip(checker):
    assert checker.check_host("a.b.evil.example").verdict == "hit"
    assert checker.check_host("good.example").verdict == "safe"
    assert checker.check_ip("198.51.100.7").expression == "198.51.100.0/24"
    assert checker.check_ip("203.0.113.1").verdict == "safe"
    assert checker.check_ip("not-an-ip").verdict == "invalid"


def test_lists(checker, snapshots):
    lists = checker.lists()
    assert [l.name for l in lists] == ["phishing", "malware"]
    assert [l.path for l in lists] == [str(s) for s in snapshots]
    assert all(l.version == 1 and l.entries > 0 and l.bytes == os.path.getsize(l.path) for l in lists)
    assert lists[1].layers["ip"][0] == 3 and set(lists[1].layers) <= {"domain", "url", "ip"}


def test_missing_file_raises_not_found(workdir):
    with pytest.raises(urlguard.NotFoundError) as e:
        urlguard.Checker(workdir / "absent.ugs")
    assert isinstance(e.value, urlguard.Error)
    assert e.value.code == urlguard.StatusCode.NOT_FOUND and e.value.code_name == "not_found"
    assert "absent.ugs" in str(e.value)


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign"])
def test_corrupt_snapshot_raises_corruption(workdir, snapshots, damage):
    data = bytearray(snapshots[0].read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) - 10] ^= 0xFF
    else:
        data = bytearray(b"PK\x03\x04 not a snapshot" + bytes(100))
    path = workdir / f"damaged-{damage}.ugs"
    path.write_bytes(bytes(data))
    with pytest.raises(urlguard.CorruptionError) as e:
        urlguard.Checker([path])
    assert e.value.code == urlguard.StatusCode.CORRUPTION
    assert e.value.code == 3 and str(path) in str(e.value)


def test_same_list_twice_is_invalid_argument(snapshots):
    with pytest.raises(urlguard.InvalidArgumentError) as e:
        urlguard.Checker([snapshots[0], snapshots[0]])
    assert e.value.code == urlguard.StatusCode.INVALID_ARGUMENT


def test_open_directory(workdir, snapshots):
    d = workdir / "only-snapshots"
    d.mkdir(exist_ok=True)
    for s in snapshots:
        (d / s.name).write_bytes(s.read_bytes())
    c = urlguard.Checker.open_directory(d)
    assert sorted(l.name for l in c.lists()) == ["malware", "phishing"]
    empty = workdir / "empty-dir"
    empty.mkdir(exist_ok=True)
    with pytest.raises(urlguard.NotFoundError):
        urlguard.Checker.open_directory(empty)


def test_close_and_context_manager(snapshots):
    with urlguard.Checker(snapshots) as c:
        assert c.check("http://evil.example/").verdict == "hit"
    assert c.closed
    with pytest.raises(urlguard.FailedPreconditionError):
        c.check("http://evil.example/")


def test_threads_share_one_checker(checker):
    # Many URLs: listed ones, their neighbours, clean ones and invalid ones, checked from 8 threads at once (the
    # GIL is released during lookups) both one by one and in batches; every result equals the single-threaded one.
    urls = []
    for i in range(400):
        urls += [f"http://host{i}.evil.example/p{i}", f"http://clean-{i}.example.org/a/b?i={i}",
                 f"http://198.51.100.{i % 256}/x", f"http://secure-bank.example/login.php?n={i}", f"bad{i}:x"]
    expected = [checker.check(u).to_json() for u in urls]
    assert sum('"verdict":"hit"' in e for e in expected) >= 800
    start = threading.Barrier(8)

    def work(k):
        start.wait()
        if k % 2:
            return [v.to_json() for v in checker.check_many(urls)]
        return [checker.check(u).to_json() for u in urls]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    for r in results:
        assert r == expected


def test_check_many_releases_the_gil(checker):
    # While one thread is inside a long check_many, another Python thread keeps running. If the batch held the
    # GIL (conversion, lookups and verdicts are all C++ without Python bytecode), the main thread would get no
    # turn at all between the batch's start and its end.
    urls = [f"http://clean-{i}.example.org/some/longer/path/{i}.html?q={i}" for i in range(300_000)]
    inside = threading.Event()
    done = threading.Event()
    batch_seconds = []

    def work():
        import time
        inside.set()
        t0 = time.monotonic()
        checker.check_many(urls)
        batch_seconds.append(time.monotonic() - t0)
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    inside.wait()
    turns = 0
    while not done.is_set():
        turns += 1
        done.wait(0.001)
    worker.join()
    assert turns >= 20, (turns, batch_seconds)
