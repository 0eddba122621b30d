"""Shared set-up of the browser console's tests (no tests here): Debian's Chromium driven by
Playwright, signing in, screenshots."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.paths import ROOT

ARTIFACTS = Path(os.environ.get("RESCIND_ARTIFACTS", ROOT / ".rescind/artifacts")) / "console"
DOCS = ROOT / "docs/console"  # the screenshots the documentation shows

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "the console test needs Debian's chromium: apt-get install -y chromium"
    return path


def sign_in(browser, base: str, token: str, timezone_id: str | None = None) -> Page:
    """A new page signed in with ``token`` (in the browser's time zone ``timezone_id``, default
    the machine's); ``page.errors`` collects page errors and console errors (CSP violations,
    failed requests)."""
    zone = {"timezone_id": timezone_id} if timezone_id else {}
    page = browser.new_context(viewport={"width": 1400, "height": 900}, **zone).new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(f"{base}/console/")
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#app")).to_be_visible()
    page.errors = errors
    return page


def shot(page: Page, name: str, full_page: bool = True, docs: bool = True) -> None:
    """A PNG of the page among the run's artifacts (``$RESCIND_ARTIFACTS/console/``) and, with
    ``docs`` and RESCIND_UPDATE_SCREENSHOTS=1 (`make screenshots`), as the documentation's
    ``docs/console/<name>.png``: an ordinary test run leaves the checkout as it was.
    ``full_page=False``: the window only, for a drawer or a dialog, which stay in the window
    while the page scrolls."""
    update = docs and os.environ.get("RESCIND_UPDATE_SCREENSHOTS") == "1"
    for folder in [ARTIFACTS] + ([DOCS] if update else []):
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=full_page)
