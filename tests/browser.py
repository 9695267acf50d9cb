"""A small client of Chromium's DevTools protocol over a pipe, for the tests of the HTML report.

``chromium --headless --remote-debugging-pipe`` reads protocol messages (JSON, each ended by a NUL
byte) on its file descriptor 3 and writes on 4: no websocket, no port, nothing downloaded (the
system's browser, looked up by ``tests/tools.py``).  Every request the page makes is intercepted
(``Fetch.enable`` on every URL pattern) and recorded; one whose scheme is not ``file:``, ``data:`` or
``blob:`` is failed, and the tests assert there was none.  Console errors and uncaught exceptions
are recorded too.  Protocol: https://chromedevtools.github.io/devtools-protocol/
"""

from __future__ import annotations

import base64
import json
import os
import select
import struct
import subprocess
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

ALLOWED_SCHEMES = ("file:", "data:", "blob:")


class Browser:
    """One headless Chromium with one page, driven over the pipe (see the module docstring)."""

    def __init__(self, executable: str, width: int = 1280, height: int = 900) -> None:
        self.profile = tempfile.TemporaryDirectory(prefix="linkaudit-chromium-")
        to_child_r, self._write = os.pipe()
        self._read, from_child_w = os.pipe()
        for fd in (self._write, self._read):
            os.set_inheritable(fd, False)

        def fds() -> None:  # in the child: the protocol's descriptors 3 and 4 (dup first: either may be 3 or 4)
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [
            executable, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update", "--hide-scrollbars",
            f"--user-data-dir={self.profile.name}", f"--window-size={width},{height}", "about:blank",
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            # close_fds=False: descriptors 3 and 4 are made in preexec_fn, which runs before the closing
            args, close_fds=False, preexec_fn=fds, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.requests: list[str] = []
        self.blocked: list[str] = []
        self.errors: list[str] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            self.call(method, session=True)
        self.call("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}, session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )

    # -- the protocol -------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._write, json.dumps(message).encode() + b"\0")

    def _receive(self, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._read], [], [], left)[0]:
                return None
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        if "method" in message:
            self._event(message)
        return message

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params", {})
        self.events.append(message)
        if method == "Fetch.requestPaused":
            url = params["request"]["url"]
            self.requests.append(url)
            if url.startswith(ALLOWED_SCHEMES):
                self._send(
                    {
                        "id": self._next(),
                        "method": "Fetch.continueRequest",
                        "params": {"requestId": params["requestId"]},
                        "sessionId": self.session,
                    }
                )
            else:
                self.blocked.append(url)
                self._send(
                    {
                        "id": self._next(),
                        "method": "Fetch.failRequest",
                        "params": {"requestId": params["requestId"], "errorReason": "BlockedByClient"},
                        "sessionId": self.session,
                    }
                )
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", ""))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(params["entry"]["text"])

    def _next(self) -> int:
        self._id += 1
        return self._id

    def call(self, method: str, params: dict[str, Any] | None = None, session: bool = False,
             timeout: float = 60) -> dict[str, Any]:  # fmt: skip
        """Send one command and wait for its answer; ``RuntimeError`` on a protocol error or a timeout."""
        ident = self._next()
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = self._receive(deadline - time.monotonic())
            if answer is not None and answer.get("id") == ident:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
        raise RuntimeError(f"{method}: no answer in {timeout} s")

    def pump(self, seconds: float) -> None:
        """Handle the events arriving in the next ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._receive(deadline - time.monotonic())

    # -- what the tests do --------------------------------------------------------------------
    def open(self, url: str, ready: str = "document.readyState === 'complete'", timeout: float = 60) -> None:
        """Navigate to ``url`` and wait until the expression ``ready`` is true."""
        self.call("Page.navigate", {"url": url}, session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.evaluate(ready) is True:
                    return
            except RuntimeError:
                pass  # the new document is not there yet
            self.pump(0.1)
        raise RuntimeError(f"{url}: not ready in {timeout} s ({ready})")

    def evaluate(self, expression: str, await_promise: bool = False) -> Any:
        """The value of a JavaScript expression in the page; ``RuntimeError`` when it throws."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": await_promise}, session=True)  # fmt: skip
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the centre of the first element ``selector`` names."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center', inline: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 1}, session=True)  # fmt: skip
        self.pump(0.2)

    def screenshot(self, full_page: bool = True) -> bytes:
        """A PNG of the page (the whole document when ``full_page``)."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        return base64.b64decode(self.call("Page.captureScreenshot", params, session=True)["data"])

    def close(self) -> None:
        """End the browser (the one this object started) and remove its profile."""
        with suppress(RuntimeError, OSError):
            self.call("Browser.close", timeout=10)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._read, self._write):
            os.close(fd)
        self.profile.cleanup()


@contextmanager
def browser(executable: str, width: int = 1280, height: int = 900) -> Iterator[Browser]:
    """A ``Browser`` for the block, closed after it."""
    b = Browser(executable, width, height)
    try:
        yield b
    finally:
        b.close()


def png_colours(png: bytes, limit: int = 64) -> int:
    """How many distinct pixel values (at most ``limit``) an 8-bit RGB or RGBA PNG holds, read with
    zlib alone (the PNG spec's filters undone): 1 for a blank image."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = data
        elif kind == b"IDAT":
            chunks.append(data)
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), f"PNG of depth {depth}, colour type {colour}"
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    previous = bytearray(stride)
    seen: set[bytes] = set()
    for y in range(height):
        line = raw[y * (stride + 1) : (y + 1) * (stride + 1)]
        row = _unfilter(line[0], bytearray(line[1:]), previous, bpp)
        for x in range(0, stride, bpp * 7):  # a sample of each row is enough to tell blank from drawn
            seen.add(bytes(row[x : x + bpp]))
        if len(seen) >= limit:
            return limit
        previous = row
    return len(seen)


def _unfilter(kind: int, row: bytearray, prev: bytearray, bpp: int) -> bytearray:
    for i in range(len(row)):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if kind == 1:
            row[i] = (row[i] + a) & 0xFF
        elif kind == 2:
            row[i] = (row[i] + b) & 0xFF
        elif kind == 3:
            row[i] = (row[i] + (a + b) // 2) & 0xFF
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    return row
