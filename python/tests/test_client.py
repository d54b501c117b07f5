# SPDX-License-Identifier: Apache-2.0
"""urlguard.Client on a data directory synced from a real urlguard-server on 127.0.0.1 (conftest.server)."""
import pytest

import urlguard
from conftest import cli_json_lines, run

CLEAN = [f"https://news-site-{i}.example.org/articles/2026/story-{i}.html" for i in range(1500)]


@pytest.fixture(scope="module")
def synced(server, workdir):
    url, pub, _ = server
    data = workdir / "client-data"
    data.mkdir()
    client = urlguard.Client(data, server_url=url, public_key_files=[pub], lists=["phishing", "malware"],
                             watch=False)
    # Subscribed but not installed yet: listed, and stale (never a confident "safe" without the lists).
    assert [(l.list, l.version, l.stale, l.stale_reason) for l in client.lists()] == [
        ("malware", 0, True, "not_installed"), ("phishing", 0, True, "not_installed")]
    assert client.check_local("https://news-site-1.example.org/").stale
    reports = client.sync_now()
    assert [(r.list, r.result, r.from_version, r.to_version, r.used_diff, r.error) for r in reports] == [
        ("malware", "updated", 0, 1, False, None), ("phishing", "updated", 0, 1, False, None)]
    assert all(r.bytes > 0 for r in reports)
    client.refresh()
    yield client, data, url, pub
    client.close()


def test_wait_until_ready(server, workdir):
    """wait_until_ready waits for another writer of the data directory (here a second Client's sync_now)."""
    url, pub, _ = server
    data = workdir / "wait-data"
    data.mkdir()
    with urlguard.Client(data, lists=["phishing"], watch=False) as reader:
        assert reader.wait_until_ready(0) is False
        with urlguard.Client(data, server_url=url, public_key_files=[pub], lists=["phishing"]) as writer:
            assert [r.result for r in writer.sync_now()] == ["updated"]
        assert reader.wait_until_ready(30) is True
        assert not reader.check_local("https://news-site-1.example.org/").stale
        with pytest.raises(urlguard.InvalidArgumentError):
            reader.wait_until_ready(-1)


def test_lists_after_sync(synced):
    client, *_ = synced
    lists = client.lists()
    assert [(l.list, l.version, l.last_sync_result, l.stale, l.consecutive_failures) for l in lists] == [
        ("malware", 1, "ok", False, 0), ("phishing", 1, "ok", False, 0)]
    assert all(l.stale_reason == "" for l in lists)
    assert all(l.entries > 0 and l.expires_unix > l.created_unix and l.next_sync_unix > 0 for l in lists)
    assert client.stats()["generation"] >= 1


def test_local_and_verified_verdicts(synced):
    client, *_ = synced
    assert client.check_local("http://evil.example/login").verdict == "hit"
    v = client.check("http://evil.example/login")
    assert (v.verdict, v.list, v.expression) == ("malicious", "phishing", "evil.example/")
    assert v.threat == "phishing"
    assert client.check("https://www.wikipedia.org/").verdict == "safe"
    assert client.check("javascript:alert(1)").verdict == "invalid"
    # At a 1% filter rate some clean URLs hit locally; the server's answer makes them safe_verified.
    kinds = [v.verdict for v in client.check_many(CLEAN)]
    assert set(kinds) == {"safe", "safe_verified"}, set(kinds)
    stats = client.stats()
    assert stats["verifications"] >= 1 and stats["verification_failures"] == 0
    assert stats["by_verdict"]["malicious"] >= 1 and stats["by_verdict"]["safe_verified"] >= 1
    assert stats["lookups"] >= len(CLEAN) + 2


def test_verdicts_equal_cli_json(synced):
    client, data, url, _ = synced
    urls = ["http://evil.example/login", "http://downloads.example/setup.exe", "https://www.wikipedia.org/",
            "mailto:x@y.example"] + CLEAN[:300]
    cli = cli_json_lines("check", "--json", "--data-dir", data, "--verify", "--server", url, "-",
                         stdin="\n".join(urls) + "\n")
    ours = [v.to_dict() for v in client.check_many(urls, canonical=True)]
    assert ours == cli
    local = cli_json_lines("check", "--json", "--data-dir", data, "-", stdin="\n".join(urls) + "\n")
    assert [v.to_dict() for v in client.check_many(urls, canonical=True, local=True)] == local


def test_second_sync_is_current(synced):
    client, *_ = synced
    assert {r.result for r in client.sync_now()} <= {"up_to_date", "not_modified"}


def test_wrong_key_fails_per_list(server, synced, workdir):
    _, data, url, _ = synced
    other = workdir / "other-keys"
    run("urlguard-publish", "keygen", "--out", other)
    fresh = workdir / "client-wrong-key"
    fresh.mkdir()
    with urlguard.Client(fresh, server_url=url, public_key_files=[other / "urlguard-ed25519.pub.pem"],
                         lists=["phishing"], watch=False) as c:
        (r,) = c.sync_now()
        assert r.result == "failed" and r.error.startswith("permission_denied"), r
        assert c.check("http://evil.example/").verdict == "safe"  # nothing installed: unknown, stale
        assert c.check("http://evil.example/").stale


def test_subscribed_list_that_failed_is_stale(server, workdir):
    """A list whose first sync failed stays subscribed (recorded in the data directory): a Client told nothing about
    lists lists it as not installed and calls every verdict stale (issue 22, item 2)."""
    url, pub, _ = server
    data = workdir / "client-failed-list"
    proc = run("urlguard", "sync", "--once", "--data-dir", data, "--server", url, "--public-key", pub,
               "--list", "phishing", "--list", "no-such-list", check=False)
    assert proc.returncode == 2, proc.stdout
    assert "no-such-list: failed" in proc.stdout
    with urlguard.Client(data, watch=False) as c:
        assert [(l.list, l.version > 0, l.stale, l.stale_reason) for l in c.lists()] == [
            ("no-such-list", False, True, "not_installed"), ("phishing", True, False, "")]
        assert c.check_local("https://news-site-1.example.org/").stale


def test_option_errors(workdir, server):
    with pytest.raises(urlguard.InvalidArgumentError) as e:
        urlguard.Client("")
    assert e.value.code == urlguard.StatusCode.INVALID_ARGUMENT
    with pytest.raises(urlguard.NotFoundError):
        urlguard.Client(workdir, public_key_files=[workdir / "no-such-key.pem"])
    with pytest.raises(TypeError):
        urlguard.Client(workdir, lists="phishing")
    with urlguard.Client(workdir / "client-data", watch=False) as offline:
        with pytest.raises(urlguard.Error) as e:
            offline.sync_now()  # no server, no keys
        assert e.value.code == urlguard.StatusCode.INVALID_ARGUMENT
    assert offline.closed
    with pytest.raises(urlguard.FailedPreconditionError):
        offline.check("http://evil.example/")


def test_check_releases_the_gil_while_waiting_for_verification(synced):
    # The verification server is a Python thread: it can read the request and hang up only while the thread in
    # Client.check (blocked in C++ on that request) does not hold the GIL. Holding it, check would wait for the
    # whole deadline (20 s) and the server thread would see the request only afterwards.
    import socket
    import threading
    import time

    _, data, _, _ = synced
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    got_request = threading.Event()

    def serve():
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            got_request.set()
        listener.close()

    server = threading.Thread(target=serve)
    server.start()
    port = listener.getsockname()[1]
    with urlguard.Client(data, server_url=f"http://127.0.0.1:{port}", verify_deadline_ms=20000,
                         watch=False) as c:
        t0 = time.monotonic()
        v = c.check("http://www.phish.test/wp-admin/gil-test")  # a hit no earlier test verified (not cached)
        elapsed = time.monotonic() - t0
    server.join(30)
    assert got_request.is_set()
    assert v.verdict == "unverified_hit" and v.error, v
    assert elapsed < 10, elapsed
