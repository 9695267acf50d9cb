"""The content hashes repair tools put in vendored libraries' names, taken out by
``baseline.unhashed`` (baselines, ``diff``, SARIF fingerprints) and ``baseline.original_names``
(``why``): auditwheel's ``<base up to the first dot>-<8 hex>.<rest>`` wherever the rest puts the
version (numpy's ``libopenblas64_p-r0-5007b62f.3.23.dev.so`` kept its hash: a baseline for numpy
1.25.2 did not match 1.26.4), delvewheel's ``<name>-<32 hex>.dll``; names without one untouched."""

from __future__ import annotations

import pytest

from linkaudit.config.baseline import unhashed


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # auditwheel, the hash mid-name: after the part before the first dot
        ("numpy.libs/libopenblas64_p-r0-5007b62f.3.23.dev.so", "numpy.libs/libopenblas64_p-r0-*.3.23.dev.so"),
        ("scipy.libs/libopenblasp-r0-2ecf47d5.3.7.dev.so", "scipy.libs/libopenblasp-r0-*.3.7.dev.so"),
        (
            "cp311-cp311-manylinux_x86_64:numpy.libs/libopenblas64_p-r0-0cf96a72.3.23.dev.so",
            "cp311-cp311-manylinux_x86_64:numpy.libs/libopenblas64_p-r0-*.3.23.dev.so",
        ),
        # grafted twice: both hashes
        ("libgfortran-040039e1-0352e75f.so.5.0.0", "libgfortran-*.so.5"),
        # in a message, between quotes and after a colon
        ("x.so: needs 'libopenblas64_p-r0-5007b62f.3.23.dev.so'", "x.so: needs 'libopenblas64_p-r0-*.3.23.dev.so'"),
        # delvewheel: 32 hex digits before the extension, the name before it keeps its dots and dashes
        (
            "libopenblas64__v0.3.23-293-gc2f4bdbb-gcc_10_3_0-2bde3a66a51006b2b53eb373ff767a3f.dll",
            "libopenblas64__v0.3.23-293-gc2f4bdbb-gcc_10_3_0-*.dll",
        ),
    ],
)
def test_a_hash_after_the_part_before_the_first_dot_is_taken_out(name: str, expected: str) -> None:
    assert unhashed(name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("libcudart-d0da41ae.so.12", "libcudart-*.so.12"),
        ("pillow.libs/libavif-01e67780.so.16.4.1", "pillow.libs/libavif-*.so.16"),
        ("msvcp140-263139962577ecda4cd9469ca360a746.dll", "msvcp140-*.dll"),
        # no hash: untouched
        ("libfoo-1.2.3.so", "libfoo-1.2.3.so"),
        ("libz.so.1", "libz.so.1"),
        ("libtiff.so.6.0.2", "libtiff.so.6.0.2"),
        ("libfoo-DEADBEEF.so", "libfoo-DEADBEEF.so"),  # auditwheel's hex digits are lowercase
        ("libfoo-deadbee.so.1", "libfoo-deadbee.so.1"),  # 7 digits
        ("libfoo-deadbeef0.so.1", "libfoo-deadbeef0.so.1"),  # 9 digits
        ("foo.libbar-12345678.so", "foo.libbar-12345678.so"),  # not before the name's first dot
        ("libfoo-12345678.sock", "libfoo-12345678.sock"),  # no "so" part: not a shared library
        ("pkg-deadbeef.dist-info/RECORD", "pkg-deadbeef.dist-info/RECORD"),
        ("helper-2631399625.dll", "helper-2631399625.dll"),
    ],
)
def test_hashes_taken_out_as_before_and_names_without_one_untouched(name: str, expected: str) -> None:
    assert unhashed(name) == expected


def test_original_names_are_the_names_before_the_repair() -> None:
    """``why`` asks by these: the name with the hash out, as it was and cut to its major version."""
    from linkaudit.config.baseline import original_names

    assert original_names("libjpeg-25f93ad1.so.62.4.0") == ("libjpeg.so.62.4.0", "libjpeg.so.62")
    assert original_names("libopenblas64_p-r0-0cf96a72.3.23.dev.so") == ("libopenblas64_p-r0.3.23.dev.so",)
    assert original_names("libgfortran-040039e1-0352e75f.so.5.0.0") == ("libgfortran.so.5.0.0", "libgfortran.so.5")
    assert original_names("msvcp140-263139962577ecda4cd9469ca360a746.dll") == ("msvcp140.dll",)
    assert original_names("libjpeg.so.62") == ()
    assert original_names("libfoo-1.2.3.so") == ()


def test_hostile_names_are_cut_without_backtracking() -> None:
    """A name of 20,000 hashes ending in no dot, or in one: taken out in one pass (a backtracking
    pattern over ``(-[0-9a-f]{8})+`` took time quadratic in them)."""
    from linkaudit.config.baseline import original_names

    assert unhashed("x" + "-00000000" * 20_000 + "y.so") == "x" + "-00000000" * 20_000 + "y.so"
    assert unhashed("x" + "-00000000" * 20_000 + ".so") == "x-*.so"
    assert original_names("a-" * 100_000) == ()
