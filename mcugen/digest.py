"""SHA-256 and SHA-1 without hashlib: importing hashlib starts OpenSSL (~10 M instructions, 1 %
of a build) for digests CPython also has built in (`_sha256`, `_sha1`; `random` takes its
`_sha512` the same way). Where a Python lacks them, hashlib's."""

from __future__ import annotations

from typing import Any

try:
    from _sha1 import sha1 as _sha1  # type: ignore[import-not-found, unused-ignore]
    from _sha256 import sha256 as _sha256  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # another implementation, or Python 3.12+ (_sha2)
    from hashlib import sha1 as _sha1
    from hashlib import sha256 as _sha256


def sha256(data: bytes = b"") -> Any:
    """A SHA-256 object (update(), hexdigest(), digest()) as hashlib.sha256 gives."""
    return _sha256(data)


def sha1(data: bytes = b"") -> Any:
    return _sha1(data)
