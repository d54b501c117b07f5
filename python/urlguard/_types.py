# SPDX-License-Identifier: Apache-2.0
"""Value types returned by the urlguard extension (plain, immutable dataclasses).

Field names follow the JSON that `urlguard` prints for the same thing (include/urlguard/render.h).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union


def _asdict(obj: Any) -> Dict[str, Any]:
    return dataclasses.asdict(obj)


@dataclass(frozen=True)
class Match:
    """One list entry a URL matched (an element of Verdict.matches)."""

    list: str
    layer: str  # "domain", "url" or "ip"
    expression: str
    sha256: str
    list_version: int

    to_dict = _asdict


@dataclass(frozen=True)
class ListInfo:
    """An open snapshot file (Checker.lists())."""

    name: str
    version: int
    created_unix: int
    entries: int
    layers: Dict[str, Tuple[int, str]]  # layer name -> (entries, filter kind) for the layers present
    bytes: int
    path: str
    sha256: str

    to_dict = _asdict


@dataclass(frozen=True)
class ListStatus:
    """An installed or subscribed list with its sync schedule (Client.lists()); `urlguard status --json` without
    age_seconds. A subscribed list that is not installed has version 0 and stale_reason "not_installed"."""

    list: str
    version: int
    entries: int
    created_unix: int
    expires_unix: int
    stale: bool
    stale_reason: str  # "", "not_installed", "damaged", "expired"
    emergency: bool
    last_sync_unix: int
    last_sync_result: str  # "none", "ok", "not_modified", "failed"
    last_sync_error: str
    next_sync_unix: int
    consecutive_failures: int

    to_dict = _asdict


@dataclass(frozen=True)
class SyncReport:
    """What one sync attempt of one list did (Client.sync_now()); the JSON of RenderSyncReportJson."""

    list: str
    result: str  # "updated", "up_to_date", "not_modified", "failed", "unsubscribed"
    from_version: int
    to_version: int
    used_diff: bool
    bytes: int
    error: Optional[str]

    to_dict = _asdict


@dataclass(frozen=True)
class Expression:
    """One lookup expression of a canonical URL."""

    expression: str
    layer: str
    sha256: str


@dataclass(frozen=True)
class CanonicalForm:
    """canonicalize(url): the canonical URL and its lookup expressions."""

    input: Union[str, bytes]
    url: str
    scheme: str
    host: str
    path: str
    query: Optional[str]  # None when the URL has no '?'
    expressions: List[Expression]

    def to_dict(self) -> Dict[str, Any]:
        """The object `urlguard canon --json` prints."""
        return {
            "input": self.input,
            "canonical": self.url,
            "expressions": [{"expression": e.expression, "sha256": e.sha256} for e in self.expressions],
            "error": None,
        }


@dataclass(frozen=True)
class FoundUrl:
    """A URL found in text. begin/end index the text (str indices for a str, byte offsets for bytes)."""

    begin: int
    end: int
    text: Union[str, bytes]  # the URL as written: text[begin:end]
    url: str  # normalized (refanged, "http://" added): give it to check() or canonicalize()
    defanged: bool
    had_scheme: bool
    cut: bool  # url was cut at MAX_FOUND_URL_BYTES

    to_dict = _asdict


@dataclass(frozen=True)
class ScanResult:
    """scan(text): the URLs found, and whether a cap stopped the scan early."""

    urls: List[FoundUrl]
    truncated: bool
    scanned_bytes: int

    to_dict = _asdict
