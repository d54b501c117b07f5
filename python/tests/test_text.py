# SPDX-License-Identifier: Apache-2.0
"""canonicalize / scan / extract_urls against the CLI's `canon --json` and `scan --json` output."""
import pytest

import urlguard
from conftest import cli_json_lines

CANON = [
    "HTTP://Login.EVIL.example:8080/account/../verify?id=7",
    "http://www.GOOgle.com/",
    "http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/%77%77%77%2E%65%62%61%79%2E%63%6F%6D/",
    "http://3279880203/blah",
    "www.google.com/q?r?s",
    "http://[2001:DB8::1]:80/a/./b/../c",
    "http://münchen.example/straße",
    "evil.example",
    "http://a.b.c.d.e.f.g/1/2/3/4/5/6.html?x=y",
]
INVALID = ["javascript:alert(1)", "http://", "http://[::zz]/", "mailto:a@b.example"]

MESSAGES = [
    "morning! the doc is at https://docs.example.com/q3 btw",
    "URGENT verify your account: hxxp://login[.]evil[.]example/secure now",
    "release notes for v1.2.3 are in readme.txt, mail me at bob@example.com",
    "two: www.example.org/x and 203.0.113.50/paypal/ plus https://münchen-bank.example/konto.",
    "Grüße — see evil[.]example/a and http://secure-bank.example/login.php",
]


def test_canonicalize_matches_cli():
    cli = cli_json_lines("canon", "--json", "--", *CANON, *INVALID)
    assert len(cli) == len(CANON) + len(INVALID)
    for url, expected in zip(CANON, cli):
        form = urlguard.canonicalize(url)
        assert form.to_dict() == expected, url
        assert form.url == expected["canonical"]
        assert [e.sha256 for e in form.expressions] == [urlguard.expression_sha256(e.expression)
                                                        for e in form.expressions]
    for url, expected in zip(INVALID, cli[len(CANON):]):
        assert expected["canonical"] is None
        with pytest.raises(urlguard.InvalidArgumentError) as e:
            urlguard.canonicalize(url)
        assert e.value.code == urlguard.StatusCode.INVALID_ARGUMENT
        assert e.value.message == expected["error"]


def test_canonical_parts():
    f = urlguard.canonicalize("HTTP://Login.EVIL.example:8080/account/../verify?id=7")
    assert (f.url, f.scheme, f.host, f.path, f.query) == (
        "http://login.evil.example/verify?id=7", "http", "login.evil.example", "/verify", "id=7")
    assert f.expressions[-1] == urlguard.Expression(
        "evil.example/", "domain", urlguard.expression_sha256("evil.example/"))
    assert urlguard.canonicalize("http://a.example/").query is None
    assert urlguard.canonicalize("http://a.example/?").query == ""


def test_scan_matches_cli(checker, snapshots, workdir):
    chat = workdir / "chat.txt"
    chat.write_text("\n".join(MESSAGES) + "\n", encoding="utf-8")
    args = ["scan", "--json"]
    for s in snapshots:
        args += ["--snapshot", s]
    cli = cli_json_lines(*args, chat)
    ours = []
    for line_no, message in enumerate(MESSAGES, 1):
        for u in urlguard.extract_urls(message):
            assert message[u.begin:u.end] == u.text
            d = checker.check(u.url).to_dict()
            d.update(file=str(chat), line=line_no, text=u.text, defanged=u.defanged)
            ours.append(d)
    assert ours == cli
    assert any(d["verdict"] == "hit" for d in ours) and any(d["defanged"] for d in ours)


def test_scan_result_and_bytes_offsets():
    text = "ü hxxp://evil[.]example/x"
    r = urlguard.scan(text)
    assert not r.truncated and r.scanned_bytes == len(text.encode())
    (u,) = r.urls
    assert (u.begin, u.url, u.defanged, u.had_scheme, u.cut) == (2, "http://evil.example/x", True, True, False)
    (b,) = urlguard.extract_urls(text.encode())
    assert b.begin == 3 and b.text == text.encode()[3:]
    assert urlguard.extract_urls("main.py and README.md, a@b.example") == []


def test_scan_caps():
    text = " ".join(f"https://w{i}.example/" for i in range(urlguard.MAX_FOUND_URLS_PER_TEXT + 5))
    r = urlguard.scan(text)
    assert r.truncated and len(r.urls) == urlguard.MAX_FOUND_URLS_PER_TEXT
