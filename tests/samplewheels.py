"""Wheels built from sample libraries, for the tests that need their own (installations, sites)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def sample_write_wheel() -> Callable[..., None]:
    """``sample_bins/build_wheels.py``'s ``write_wheel`` (METADATA, WHEEL, RECORD as PEP 427 says),
    for tests that build their own wheels from sample libraries."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "build_wheels", Path(__file__).resolve().parents[1] / "sample_bins" / "build_wheels.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write_wheel  # type: ignore[no-any-return]
