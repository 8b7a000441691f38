"""Open the built documentation site (_docs/) in headless Chromium and check what a reader would see.

    python scripts/check_site.py [--site _docs] [--out _site_check] [--chromium PATH]

The site is served over HTTP on localhost (as any static host serves it) and every page is opened at 1280x900.
A page passes when it loads (HTTP 200), has a title and one H1, shows no nbdev/Quarto directive, raw front matter or
placeholder docstring, loads every image, requests nothing outside the site, logs no console error, does not scroll
sideways (at 1280 and 390 px), and weighs at most --max-page-mb with its images; every link inside the site must reach an existing page and
anchor. The search box must find a documented function, with the site's own search index and no console error.
Each page is checked with an empty search index served in place of the site's (MkDocs Material's search worker otherwise
builds the whole site's index again on every page opened, about a CPU-second a page that no page check reads); the
search check then loads the real one. All pages are opened one after the other in one browser tab (a new tab a page started
a renderer and MkDocs Material's scripts again for each: 58 against 28 CPU-seconds for the check), each page at 1280 px
again whatever width the last left; each page's console errors and requests are collected by listeners of its own check,
removed when it is done, so nothing one page logs counts against another (an outside request that two pages make, the
second may take from the browser's cache: it fails the first). Screenshots of the index and the metrics page, and a JSON report of what was
counted, go to --out. Exits 1 on any failure and prints each one.
"""
from __future__ import annotations
import argparse, contextlib, functools, http.server, json, os, re, shutil, socketserver, sys, threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit, unquote

root = Path(__file__).resolve().parent.parent

# Text that must never reach a reader: cell directives, raw front matter, Quarto attributes, docstring placeholders.
FORBIDDEN = {
    "cell directive": re.compile(r"#\|\s*\w"),
    "show_doc call": re.compile(r"\bshow_doc\("),
    "raw front matter": re.compile(r"\boutput-file:|^---\s*description:", re.M),
    "Quarto attribute": re.compile(r"\{target=|\{\.callout"),
    "placeholder docstring": re.compile(r"Call self as a function|Initialize self\.  See help"),
    "local path": re.compile(r"/work/|/tmp/|/home/\w+/"),
}

class Ids(HTMLParser):
    "The element ids of one HTML page."
    def __init__(self):
        super().__init__(); self.ids = set()
    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("id", "name") and v: self.ids.add(v)

@functools.lru_cache(maxsize=None)
def page_ids(path: Path) -> frozenset:
    "Ids defined in the page at `path`."
    p = Ids(); p.feed(path.read_text(errors="replace")); return frozenset(p.ids)

def serve(site: Path) -> tuple[socketserver.TCPServer, str]:
    "Serve `site` on a free localhost port in a background thread; returns the server and its base URL."
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args): pass
    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"

def site_pages(site: Path) -> list[str]:
    "The site's HTML pages (MkDocs' 404 page aside), index first."
    pages = sorted(p.name for p in site.glob("*.html") if p.name != "404.html")
    return sorted(pages, key=lambda n: n != "index.html")

def check_link(href: str, page_url: str, base: str, site: Path) -> str | None:
    "Why an internal link is broken, or None."
    url = urljoin(page_url, href)
    if not url.startswith(base): return None
    parts = urlsplit(url)
    rel = unquote(parts.path[len(urlsplit(base).path):]) or "index.html"
    target = site / rel
    if target.is_dir(): target = target / "index.html"
    if not target.is_file(): return f"{href}: no such file {rel}"
    if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in page_ids(target):
        return f"{href}: {rel} has no anchor #{unquote(parts.fragment)}"
    return None

LOAD_IMAGES = """async () => {
  const imgs = [...document.images];
  imgs.forEach(i => { i.loading = 'eager'; });
  await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
  return {n: imgs.length, broken: imgs.filter(i => !(i.naturalWidth > 0)).map(i => i.getAttribute('src')),
          wider: imgs.filter(i => i.getBoundingClientRect().width > document.querySelector('.md-content').getBoundingClientRect().width + 1).map(i => i.getAttribute('src'))};
}"""

PAGE_FACTS = """() => ({
  title: document.title,
  h1: document.querySelectorAll('article h1').length,
  text: document.querySelector('article') ? document.querySelector('article').innerText : '',
  links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  width: window.innerWidth,
  toc: document.querySelectorAll('.md-sidebar--secondary .md-nav__link').length,
  h2: document.querySelectorAll('article h2').length,
  footer: document.querySelectorAll('.md-footer__link').length,
  highlighted: document.querySelectorAll('.highlight code span').length,
  code_blocks: document.querySelectorAll('.highlight pre').length,
})"""

@contextlib.contextmanager
def listening(page, base: str):
    "Within the block, the console errors (page errors too) and the requests outside `base` of the tab `page`: (console, external), lists that fill as it runs."
    console, external = [], []
    listeners = {"console": lambda m: console.append(m.text) if m.type == "error" else None, "pageerror": lambda e: console.append(str(e)),
                 "request": lambda r: external.append(r.url) if not r.url.startswith((base, "data:", "blob:")) else None}
    for event, listener in listeners.items(): page.on(event, listener)
    try: yield console, external
    finally:
        for event, listener in listeners.items(): page.remove_listener(event, listener)

def check_page(page, name: str, base: str, site: Path, max_mb: float, report: dict, screenshot: Path | None = None) -> list[str]:
    "Open one page in the tab `page` and return its failures (`screenshot`: save one at 1280 px first; the tab is left at 390 px)."
    with listening(page, base) as (console, external):
        return page_failures(page, name, base, site, max_mb, report, screenshot, console, external)

def page_failures(page, name: str, base: str, site: Path, max_mb: float, report: dict, screenshot: Path | None,
                  console: list, external: list) -> list[str]:
    "`check_page`'s checks, with the console errors and outside requests its listeners collect while the page loads."
    fails = []
    page.set_viewport_size({"width": 1280, "height": 900})  # the tab may come from the last page's check, at 390 px
    url = base + name
    response = page.goto(url, wait_until="load")
    if response is None or response.status != 200: return [f"{name}: HTTP {response.status if response else 'no response'}"]
    images = page.evaluate(LOAD_IMAGES)
    facts = page.evaluate(PAGE_FACTS)
    title = facts["title"].strip()
    if not title or title.split(" - ")[0].strip() in ("", "vqa_robust") and name != "index.html": fails.append(f"{name}: no page title ({title!r})")
    if facts["h1"] != 1: fails.append(f"{name}: {facts['h1']} H1 headings")
    for what, rx in FORBIDDEN.items():
        m = rx.search(facts["text"])
        if m: fails.append(f"{name}: shows a {what}: ...{facts['text'][max(0, m.start() - 40):m.end() + 40]!r}...")
    fails += [f"{name}: image does not load: {src}" for src in images["broken"]]
    fails += [f"{name}: image wider than the page: {src}" for src in images["wider"]]
    if facts["overflow"] > 1: fails.append(f"{name}: the page scrolls sideways by {facts['overflow']} px at {facts['width']} px")
    if facts["h2"] and not facts["toc"]: fails.append(f"{name}: no table of contents")
    if not facts["footer"]: fails.append(f"{name}: no previous/next links")
    if facts["code_blocks"] and not facts["highlighted"]: fails.append(f"{name}: code is not highlighted")
    links = [h for h in facts["links"] if not h.startswith(("mailto:", "javascript:"))]
    internal = [h for h in links if urljoin(url, h).startswith(base)]
    fails += [f"{name}: broken link {why}" for why in (check_link(h, url, base, site) for h in internal) if why]
    fails += [f"{name}: console error: {c}" for c in console]
    fails += [f"{name}: requested outside the site: {u}" for u in external]
    weight = (site / name).stat().st_size + sum((site / urljoin(name, src)).stat().st_size for src in set(
        re.findall(r'<img[^>]+src="([^"]+)"', (site / name).read_text())) if (site / urljoin(name, src)).is_file())
    if weight > max_mb * 2**20: fails.append(f"{name}: weighs {weight / 2**20:.1f} MB with its images (limit {max_mb} MB)")
    if screenshot: page.screenshot(path=str(screenshot))
    page.set_viewport_size({"width": 390, "height": 844})  # a phone, last (one layout less): wide tables and code must scroll inside their boxes
    narrow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    if narrow > 1: fails.append(f"{name}: the page scrolls sideways by {narrow} px at 390 px")
    report[name] = {"title": title, "images": images["n"], "internal_links": len(internal), "external_links": len(links) - len(internal),
                    "anchors": sum("#" in h for h in internal), "toc_entries": facts["toc"], "code_blocks": facts["code_blocks"],
                    "console_errors": len(console), "weight_mb": round(weight / 2**20, 2)}
    return fails

SEARCH_INDEX = "**/search/search_index.json"

def empty_search_index(site: Path) -> str:
    "The site's search index with no documents (its configuration kept): what each page check is served in its place."
    return json.dumps({"config": json.loads((site / "search" / "search_index.json").read_text())["config"], "docs": []})

def check_search(page, base: str, query: str = "vqa_accuracy") -> tuple[int, list[str]]:
    "Type `query` into the search box; returns the number of results and failures (console errors too)."
    with listening(page, base) as (console, _):
        with page.expect_response(lambda r: r.url.endswith("search_index.json")) as index:
            page.goto(base + "index.html", wait_until="load")
        if '"docs": []' in index.value.text(): return 0, ["search: the page was served the empty search index, not the site's"]
        page.click(".md-search__input")
        page.wait_for_timeout(500)  # the search worker builds its index from search_index.json
        page.type(".md-search__input", query, delay=30)
        try: page.wait_for_selector(".md-search-result__item", timeout=10000)
        except Exception: return 0, [f"search: no result for {query!r}"] + [f"search: console error: {c}" for c in console]
        return page.locator(".md-search-result__item").count(), [f"search: console error: {c}" for c in console]

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", default=str(root / "_docs")); ap.add_argument("--out", default=str(root / "_site_check"))
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser"))
    ap.add_argument("--max-page-mb", type=float, default=5.0)
    ap.add_argument("--pages", nargs="+", help="open only these pages (default: every page of the site)")
    args = ap.parse_args(argv)
    site, out = Path(args.site), Path(args.out)
    if not (site / "index.html").is_file(): print(f"check_site: {site}/index.html not found: build the site first (python scripts/docs.py)"); return 1
    if not args.chromium: print("check_site: no Chromium found (apt-get install chromium, or --chromium PATH)"); return 1
    from playwright.sync_api import sync_playwright
    out.mkdir(parents=True, exist_ok=True)
    server, base = serve(site)
    fails, report = [], {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            if (site / "search" / "search_index.json").is_file():
                empty = empty_search_index(site)
                context.route(SEARCH_INDEX, lambda route: route.fulfill(status=200, content_type="application/json", body=empty))
            page = context.new_page()
            for name in args.pages or site_pages(site):
                shot = out / name.replace(".html", ".png") if name in ("index.html", "metrics.html") else None
                fails += check_page(page, name, base, site, args.max_page_mb, report, shot)
            page.close()
            context.unroute(SEARCH_INDEX)  # the search check reads the site's own index
            page = context.new_page()
            n_results, search_fails = check_search(page, base)
            page.screenshot(path=str(out / "search.png"))
            fails += search_fails
            browser.close()
    finally:
        server.shutdown()
    totals = {k: sum(r[k] for r in report.values()) for k in ("images", "internal_links", "external_links", "anchors", "console_errors")}
    summary = {"pages": len(report), **totals, "search_results": n_results, "failures": fails, "pages_detail": report,
               "screenshots": [str((out / f).relative_to(root)) if (out / f).is_relative_to(root) else str(out / f) for f in ("index.png", "metrics.png", "search.png")]}
    (out / "report.json").write_text(json.dumps(summary, indent=1))
    for f in fails: print("FAIL", f)
    print(f"check_site: {len(report)} pages, {totals['images']} images, {totals['internal_links']} internal links "
          f"({totals['anchors']} with anchors), {totals['external_links']} external links (not followed), "
          f"{totals['console_errors']} console errors, {n_results} search results for 'vqa_accuracy'; "
          f"screenshots in {out}; {len(fails)} failures")
    return 1 if fails else 0

if __name__ == "__main__":
    sys.exit(main())
