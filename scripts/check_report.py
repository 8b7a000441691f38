"""Open a report written by `vqa-robust report` in headless Chromium, from disk, and check what a reader would see.

    python scripts/check_report.py REPORT.html [--screenshot PNG] [--chromium PATH] [--max-mb 5]

The file is opened as a file:// URL with no server, as a person opens it after downloading it. It passes when the page
loads with its title and one H1, logs no console error (nor page error), requests nothing but itself and data: or blob:
URIs, draws every chart (each chart's placeholder holds a canvas or an SVG once vega-embed has run), shows the gallery's
cards with their images loaded where it has a gallery, filters the gallery by model (the menu's first model: only its
cards stay visible), and weighs at most --max-mb. Prints one JSON line of what it counted; exits 1 on any failure.
"""

from __future__ import annotations
import argparse, json, os, shutil, sys
from pathlib import Path

FACTS = """() => ({
  title: document.title,
  h1: document.querySelectorAll('h1').length,
  charts: [...document.querySelectorAll('.chart')].map(c => [c.id, !!c.querySelector('canvas, svg')]),
  sections: [...document.querySelectorAll('section[id]')].map(s => s.id),
  cards: document.querySelectorAll('.gallery .card').length,
  images: [...document.querySelectorAll('.gallery img')].map(i => i.complete && i.naturalWidth > 0),
})"""

FILTER = """() => {
  const menu = document.querySelector('.filters select[data-filter="model"]');
  if (!menu || menu.options.length < 2) return null;
  const model = menu.options[1].value;
  menu.value = model; menu.dispatchEvent(new Event('change'));
  const cards = [...document.querySelectorAll('.gallery .card')];
  const shown = cards.filter(c => !c.hidden);
  return {model, shown: shown.length, of_model: cards.filter(c => c.dataset.model === model).length,
          others_shown: shown.filter(c => c.dataset.model !== model).length};
}"""


def failures(facts: dict, filtered: dict | None, console: list, outside: list, size: int, max_mb: float) -> list[str]:
    "What a reader would find wrong, one line each."
    found = [f"console error: {c}" for c in console] + [f"requested: {u}" for u in outside]
    found += [f"chart {name} not drawn" for name, drawn in facts["charts"] if not drawn]
    found += ["no chart"] * (not facts["charts"]) + [f"{facts['h1']} H1 headings"] * (facts["h1"] != 1)
    found += ["no title"] * (not facts["title"].strip())
    found += [f"{facts['images'].count(False)} gallery image(s) not loaded"] * (False in facts["images"])
    if filtered is not None and (filtered["others_shown"] or filtered["shown"] != filtered["of_model"]):
        found.append(f"the gallery's model filter shows {filtered}")
    return found + [f"weighs {size / 2**20:.2f} MB (limit {max_mb} MB)"] * (size > max_mb * 2**20)


def check(report: Path, chromium: str, screenshot: Path | None, max_mb: float) -> dict:
    "Open the report and count what a reader sees: its facts, the gallery filter's effect, errors and requests."
    from playwright.sync_api import TimeoutError as PlaywrightTimeout, sync_playwright

    url, console, outside = report.resolve().as_uri(), [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: console.append(str(e)))
        page.on(
            "request",
            lambda r: outside.append(r.url) if r.url != url and not r.url.startswith(("data:", "blob:")) else None,
        )
        page.goto(url, wait_until="load")
        try:  # every chart drawn, or 30 s gone: the facts then say which chart is not
            page.wait_for_function(
                "() => [...document.querySelectorAll('.chart')].every(c => c.querySelector('canvas, svg'))",
                timeout=30000,
            )
        except PlaywrightTimeout:
            pass
        facts = page.evaluate(FACTS)
        if screenshot:
            page.screenshot(path=str(screenshot), full_page=False)
        filtered = page.evaluate(FILTER)
        browser.close()
    size = report.stat().st_size
    return {
        **facts,
        "images": facts["images"],
        "filtered": filtered,
        "console_errors": console,
        "requests": outside,
        "bytes": size,
        "failures": failures(facts, filtered, console, outside, size, max_mb),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--screenshot", default=None)
    ap.add_argument(
        "--chromium", default=os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    ap.add_argument("--max-mb", type=float, default=5.0)
    args = ap.parse_args(argv)
    if not args.chromium:
        print("check_report: no Chromium found (apt-get install chromium, or --chromium PATH)")
        return 1
    result = check(Path(args.report), args.chromium, Path(args.screenshot) if args.screenshot else None, args.max_mb)
    shown = {**result, "images": len(result["images"])}
    print(json.dumps(shown))
    for f in result["failures"]:
        print("FAIL", f)
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
