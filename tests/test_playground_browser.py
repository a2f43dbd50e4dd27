"""The playground page end to end in a headless Chromium (Playwright): diagnostics as one types,
runs with traces, predictions, heatmaps, and the limits' errors, against the real server.

Skips, saying what is missing, where Playwright or a Chromium is not installed.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the playground needs the 'serve' extra: pip install 'crasp-lengthgen[serve]'")
pytest.importorskip("uvicorn", reason="the playground needs the 'serve' extra: pip install 'crasp-lengthgen[serve]'")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="Playwright for Python is not installed: pip install playwright")

import crasp  # noqa: E402
from crasp.parser import parse  # noqa: E402
from crasp.trace import trace  # noqa: E402
from tasks.playground import server  # noqa: E402
from tasks.playground.app import Limits  # noqa: E402
from tests.test_playground import deep_program  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
"""Chromium without a sandbox, a GPU or any network of its own (none is reachable here)."""

SLOW_LIMIT = 1.0
WAIT_MS = 15_000


def chromium() -> str | None:
    """The Chromium executable: on the PATH as chromium or chromium-browser, or /usr/bin/chromium."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    if executable is None:
        pytest.skip("no Chromium found (chromium or chromium-browser on the PATH): install it, e.g. "
                    "`apt-get install chromium`, for the playground's browser tests")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site():
    running = server.start(Limits(seconds=30.0))
    yield running.url
    running.stop()


@pytest.fixture(scope="module")
def strict_site():
    """A server with a one-second time limit."""
    running = server.start(Limits(seconds=SLOW_LIMIT, jobs=2))
    yield running.url
    running.stop()


@pytest.fixture
def page(browser, site):
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    opened.goto(site)
    opened.wait_for_selector("#check-status.ok")  # the page's own program, checked on load
    yield opened
    context.close()


def set_program(page, text: str) -> None:
    """Put ``text`` in the editor as a paste does: one input event (Playwright's fill inserts
    a long text line by line, an event each)."""
    page.eval_on_selector("#program", "(area, text) => { area.value = text; "
                          "area.dispatchEvent(new Event('input', { bubbles: true })); }", text)


def test_typing_an_error_marks_its_line_and_fixing_it_shows_the_trace(page):
    set_program(page, 'C = #"a" - #"b"\n')
    page.locator("#program").press("End")
    page.keyboard.press("Control+End")
    page.keyboard.type("Balanced = D == 0")  # D is undefined: line 2, column 12
    marked = page.wait_for_selector('#gutter .line-number.error[data-line="2"]')
    assert marked.inner_text() == "2"
    found = page.wait_for_selector("#diagnostics .diagnostic")
    assert (found.get_attribute("data-line"), found.get_attribute("data-column")) == ("2", "12")
    assert "undefined name 'D'" in found.inner_text()
    assert page.inner_text("#backdrop mark") == "D"
    assert page.locator("#gutter .line-number.error").count() == 1

    for _ in "D == 0":
        page.keyboard.press("Backspace")
    page.keyboard.type("C == 0")
    page.wait_for_selector("#check-status.ok")
    assert page.locator("#gutter .line-number.error").count() == 0
    assert page.locator("#diagnostics .diagnostic").count() == 0

    page.fill("#tokens", "a b b a b")
    page.click("#run-button")
    page.wait_for_selector("#trace-table")
    expected = trace(parse('C = #"a" - #"b"\nBalanced = C == 0'), "a b b a b")
    assert page.inner_text("#verdict") == ("accept" if expected.verdict else "reject")
    for row in expected.rows:
        cells = page.locator(f'#trace-table tr[data-name="{row.name}"] td').all_inner_texts()
        assert cells == [str(int(v)) for v in row.values], row.name
    outputs = page.locator("#trace-table tr.output td").all_inner_texts()
    assert outputs == ["accept" if v else "reject" for v in expected.rows[-1].values]


def test_predict_an_expression(page):
    page.fill("#regex", "(aa)*")
    page.fill("#alphabet", "a")
    page.click("#predict-button")
    page.wait_for_selector('#prediction-table tr[data-scheme="nope"]')
    cells = page.locator('#prediction-table tr[data-scheme="nope"] td').all_inner_texts()
    # (aa)* counts modulo 2: not in plain C-RASP, so NoPE does not generalize (Huang et al. 2025).
    assert cells[1] == "does not generalize" and cells[2] and cells[3]
    assert page.locator("#predict-error").is_hidden()


def test_compile_shows_a_heatmap_per_head(page):
    from limit_transformer.compiler import compile_program

    set_program(page, Path(crasp.library.file("dyck1")).read_text(encoding="utf-8"))
    page.wait_for_selector("#check-status.ok")
    page.fill("#tokens", "( ( ) )")
    page.click("#compile-button")
    page.wait_for_selector("#heatmaps figure")
    heads = sum(len(layer) for layer in compile_program(crasp.library.load("dyck1")).spec.heads)
    assert page.locator("#heatmaps figure").count() == heads
    drawn = page.locator("#heatmaps img.heatmap").count() + page.locator("#heatmaps table.heatmap-table").count()
    assert drawn == heads
    captions = page.locator("#heatmaps figcaption").all_inner_texts()
    assert captions[0].startswith("layer 0 head 0")
    assert page.locator("#compile-error").is_hidden()


def test_an_oversized_program_gets_its_error(page):
    set_program(page, 'A = #"a" > 0\n' + "// padding\n" * 7000)
    found = page.wait_for_selector("#diagnostics .request-error")
    assert found.inner_text().startswith("413: ") and "larger than" in found.inner_text()
    page.click("#run-button")
    page.wait_for_selector("#run-error:not([hidden])")
    assert page.inner_text("#run-error").startswith("413: ")


def test_a_slow_request_gets_its_error_and_the_page_goes_on(browser, strict_site):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(strict_site)
        set_program(page, deep_program(60))
        page.wait_for_selector("#check-status.ok")
        page.fill("#tokens", "a b a")
        started = time.monotonic()
        page.click("#compile-button")
        page.wait_for_selector("#compile-error:not([hidden])")
        assert time.monotonic() - started < SLOW_LIMIT + 1.0
        assert page.inner_text("#compile-error").startswith("504: compile: no answer within the time limit of 1 s")
        set_program(page, 'A = #"a" >')
        page.wait_for_selector('#gutter .line-number.error[data-line="1"]')
    finally:
        context.close()
