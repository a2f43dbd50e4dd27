"""The playground page, timed in a headless Chromium: keystroke to diagnostics on the screen.

For every library program (crasp/library/*.cr) the page gets the program, then keystrokes at its
end that alternately break it (a stray letter: a diagnostic) and mend it (Backspace: ok). Each
time is measured in the page, from the input event to the diagnostics drawn: the 150 ms debounce,
the /api/check request (a fresh worker process per request) and the drawing. The target is under
300 ms.

    python benchmarks/playground.py              # 20 keystrokes a program, writes benchmarks/results/playground.json
    python benchmarks/playground.py --keys 4     # a quick look

Needs the 'serve' extra, Playwright and a Chromium (/usr/bin/chromium or on the PATH).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Every import is inside main(): the playground's worker processes re-import this file as their
# __main__ module, and should not pay for Playwright.

TARGET_MS = 300.0


def main() -> None:
    import argparse
    import json
    import os
    import platform
    import statistics

    from playwright.sync_api import sync_playwright
    from tabulate import tabulate

    import crasp
    from tasks.playground import server
    from tasks.playground.app import Limits
    from tests.test_playground_browser import CHROMIUM_ARGS, chromium

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=20, help="keystrokes per program (default 20)")
    args = parser.parse_args()
    executable = chromium()
    if executable is None:
        sys.exit("no Chromium found: install it (apt-get install chromium)")

    running = server.start(Limits())
    records, rows, everything = [], [], []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(running.url)
            page.wait_for_selector("#check-status.ok")
            for name in crasp.library.names():
                text = Path(crasp.library.file(name)).read_text(encoding="utf-8").rstrip("\n")
                page.eval_on_selector("#program", "(area, text) => { area.value = text; area.focus(); "
                                      "area.setSelectionRange(text.length, text.length); "
                                      "area.dispatchEvent(new Event('input', { bubbles: true })); }", text)
                page.wait_for_selector("#check-status.ok")
                page.wait_for_timeout(50)
                times = []
                for k in range(args.keys):
                    before = page.evaluate("window.playground.checks")
                    page.keyboard.press("Backspace" if k % 2 else "x")
                    page.wait_for_function(f"window.playground.checks > {before}")
                    times.append(page.evaluate("window.playground.timings.at(-1)"))
                    page.wait_for_timeout(30)
                everything += times
                record = {"program": name, "lines": text.count("\n") + 1, "keys": len(times),
                          "median_ms": round(statistics.median(times), 1), "max_ms": round(max(times), 1)}
                records.append(record)
                rows.append(list(record.values()))
                print(rows[-1], flush=True)
            browser.close()
    finally:
        running.stop()
    median = statistics.median(everything)
    p90 = statistics.quantiles(everything, n=10)[-1] if len(everything) > 1 else everything[0]
    print()
    print(tabulate(rows, headers=["program", "lines", "keys", "median ms", "max ms"],
                   tablefmt="github"))
    print(f"\nkeystroke to diagnostics: median {median:.0f} ms, 90th percentile {p90:.0f} ms, "
          f"max {max(everything):.0f} ms over {len(everything)} keystrokes (target {TARGET_MS:.0f} ms, "
          "150 ms of it the debounce)")
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "machine": platform.machine(),
               "chromium": executable}
    out = ROOT / "benchmarks" / "results" / "playground.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, "target_ms": TARGET_MS, "debounce_ms": 150,
                               "median_ms": round(median, 1), "p90_ms": round(p90, 1),
                               "max_ms": round(max(everything), 1), "keystrokes": len(everything),
                               "records": records}, indent=2) + "\n")
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
