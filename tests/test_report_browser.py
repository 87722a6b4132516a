"""report.html in a real headless Chromium: it loads, logs no error, fetches nothing, shows its pictures.

The browser is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages ending in NUL on file descriptors 3 and 4), so the test needs no
websocket library and sees every request, console message and exception, not
only what the browser happens to print. Host names resolve nowhere
(``--host-resolver-rules``) as a second guard against the network.

``scripts/test.sh`` installs Debian's ``chromium`` when it is missing (as root);
elsewhere the test is skipped with the reason.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS

from migrate import api

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:  # pragma: no cover - depends on the machine
    why = (
        "chromium is not installed: run `bash scripts/test.sh` as root on Debian to install it"
        if os.path.exists("/etc/debian_version")
        else "chromium is not installed and this is not Debian: the browser test cannot run here"
    )
    pytest.skip(why, allow_module_level=True)

SCREENSHOTS = Path(os.environ.get("MIGRATE_SCREENSHOTS", "/tmp/migrate-report-screenshots"))
PICTURES_JS = """JSON.stringify([...document.querySelectorAll('figure svg')].map(s => {
  const r = s.getBoundingClientRect();
  return {id: s.getAttribute('aria-labelledby'), width: r.width, height: r.height,
          shapes: s.querySelectorAll('rect, path, line, text').length};
}))"""


class Browser:
    """One headless Chromium with one page, spoken to over the DevTools pipe."""

    def __init__(self, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:  # in the child: fd 3 is what it reads, fd 4 what it writes
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        assert CHROMIUM is not None
        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--hide-scrollbars",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=wire,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable", session=True)

    def call(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive(30.0)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def wait_for(self, event: str, timeout: float = 30.0) -> None:
        if any(e["method"] == event for e in self.events):
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._receive(deadline - time.monotonic()).get("method") == event:
                return
        raise TimeoutError(event)

    def drain(self, seconds: float) -> None:
        """Let late events (a delayed request, an error after load) arrive."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self._receive(deadline - time.monotonic())
            except TimeoutError:
                return

    def _receive(self, timeout: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, timeout))
            if not ready:
                raise TimeoutError("no message from the browser")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed the pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        if "method" in message:
            self.events.append(message)
        return message

    def open(self, path: Path, width: int = 1280, dark: bool = False) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )
        scheme = "dark" if dark else "light"
        self.call(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
            session=True,
        )
        self.events.clear()
        self.call("Page.navigate", {"url": path.resolve().as_uri()}, session=True)
        self.wait_for("Page.loadEventFired")
        self.drain(0.5)

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True
        )
        return result["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params |= {
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
            }
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    # What happened while the page loaded.

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"
        ]

    def failures(self) -> list[str]:
        return [
            e["params"].get("errorText", "") for e in self.events if e["method"] == "Network.loadingFailed"
        ]

    def errors(self) -> list[str]:
        found = []
        for e in self.events:
            params = e["params"]
            if e["method"] == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif e["method"] == "Runtime.exceptionThrown":
                found.append(params["exceptionDetails"].get("text", "exception"))
            elif e["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"].get("text", ""))
        return found

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Any:
    chrome = Browser(tmp_path_factory.mktemp("chromium-profile"))
    yield chrome
    chrome.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "out"
    api.run_report([str(CORPUS / "sample-site")], "kubernetes", str(out))
    return out / "report.html"


def local(url: str) -> bool:
    return url.startswith(("file:", "data:", "about:"))


def test_the_harness_sees_network_requests_and_console_errors(browser: Browser, tmp_path: Path) -> None:
    """A control page that breaks both rules: if this passed silently, the real check would prove nothing."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!doctype html><title>bad</title><img src="https://example.invalid/logo.png">'
        '<script>console.error("deliberate");</script>',
        encoding="utf-8",
    )
    browser.open(page)
    assert any(not local(url) for url in browser.requests())
    assert any("deliberate" in e for e in browser.errors())


def test_report_loads_offline_without_errors_and_shows_its_pictures(browser: Browser, report: Path) -> None:
    browser.open(report)
    assert browser.evaluate("document.readyState") == "complete"
    assert browser.evaluate("document.title").startswith("Migration plan: Slurm to Kubernetes")
    assert browser.errors() == []
    requested = browser.requests()
    assert requested and all(local(url) for url in requested), requested
    assert browser.failures() == []

    pictures = json.loads(browser.evaluate(PICTURES_JS))
    names = {p["id"].split("-")[0] for p in pictures}
    assert names == {"mix", "graph", "phases"}, pictures
    for picture in pictures:
        assert picture["width"] > 300 and picture["height"] > 150, picture
        assert picture["shapes"] > 20, picture

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = browser.screenshot(SCREENSHOTS / "report-light.png")
    assert shot.stat().st_size > 50_000
    print(f"screenshot: {shot}")


def test_report_in_dark_mode_and_narrow_window(browser: Browser, report: Path) -> None:
    browser.open(report, width=720, dark=True)
    assert browser.errors() == []
    assert all(local(url) for url in browser.requests())
    background = browser.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(13, 17, 23)"  # the dark palette, not white
    # The pictures shrink with the window instead of overflowing it.
    widths = json.loads(browser.evaluate(PICTURES_JS))
    assert all(0 < p["width"] <= 720 for p in widths), widths
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    print(f"screenshot: {browser.screenshot(SCREENSHOTS / 'report-dark-narrow.png', full_page=False)}")


def test_report_prints(browser: Browser, report: Path, tmp_path: Path) -> None:
    browser.open(report, dark=True)  # a dark screen must still print dark on white
    browser.call("Emulation.setEmulatedMedia", {"media": "print"}, session=True)
    assert browser.evaluate("getComputedStyle(document.querySelector('nav.toc')).display") == "none"
    assert browser.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    pdf = browser.call("Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True}, session=True)
    data = base64.b64decode(pdf["data"])
    assert data.startswith(b"%PDF") and data.count(b"/Type /Page") > 5
    (tmp_path / "report.pdf").write_bytes(data)
    browser.call("Emulation.setEmulatedMedia", {"media": ""}, session=True)
