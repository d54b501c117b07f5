# SPDX-License-Identifier: Apache-2.0
"""urlguard: on-device URL threat lookup against memory-mapped, signed threat lists.

    import urlguard
    checker = urlguard.Checker(["phishing.ugs", "malware.ugs"])
    v = checker.check("http://evil.example/login.php")
    if v.verdict == "hit":
        print(v.list, v.layer, v.expression)

See docs/python.md. Errors are urlguard.Error subclasses carrying a urlguard.StatusCode in .code.
"""
import enum as _enum


class StatusCode(_enum.IntEnum):
    """urlguard::StatusCode (the same numbers as the C API's ug_status)."""

    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    CORRUPTION = 3
    IO_ERROR = 4
    RESOURCE_EXHAUSTED = 5
    UNAVAILABLE = 6
    FAILED_PRECONDITION = 7
    PERMISSION_DENIED = 8
    INTERNAL = 9


from ._types import (  # noqa: E402
    CanonicalForm,
    Expression,
    FoundUrl,
    ListInfo,
    ListStatus,
    Match,
    ScanResult,
    SyncReport,
)
from ._urlguard import (  # noqa: E402
    MAX_FOUND_URL_BYTES,
    MAX_FOUND_URLS_PER_TEXT,
    MAX_SCANNED_TEXT_BYTES,
    Checker,
    Client,
    CorruptionError,
    Error,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    IoError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnavailableError,
    Verdict,
    __version__,
    canonicalize,
    expression_sha256,
    extract_urls,
    scan,
)

__all__ = [
    "CanonicalForm", "Checker", "Client", "CorruptionError", "Error", "Expression", "FailedPreconditionError",
    "FoundUrl", "InternalError", "InvalidArgumentError", "IoError", "ListInfo", "ListStatus", "Match",
    "MAX_FOUND_URL_BYTES", "MAX_FOUND_URLS_PER_TEXT", "MAX_SCANNED_TEXT_BYTES", "NotFoundError",
    "PermissionDeniedError", "ResourceExhaustedError", "ScanResult", "StatusCode", "SyncReport",
    "UnavailableError", "Verdict", "__version__", "canonicalize", "expression_sha256", "extract_urls", "scan",
]

for _cls in (Checker, Client, Verdict):
    _cls.__module__ = __name__  # urlguard.Checker, not urlguard._urlguard.Checker, in reprs and docs
del _cls
