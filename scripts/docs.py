"""Build the documentation site from the notebooks.

Two paths read the same notebooks through nbdev's own processing (`proc_nbs`: cell directives, `show_doc`, hidden
cells, front matter), so a page shows on both what nbdev decides it shows:

    python scripts/docs.py            # offline: nbdev's processing, then MkDocs (Material theme) into _docs/
    python scripts/docs.py --reuse-proc   # the same, from the _proc/ of the last build (faster, for layout work)
    python scripts/docs.py --quarto   # nbdev_docs, the Quarto site of _quarto.yml (needs Quarto; the Pages workflow)

Quarto cannot be installed on every machine (its PyPI package downloads a binary at install time), so the offline path
uses a maintained static-site generator that installs from PyPI alone: MkDocs with Material for MkDocs, which gives the
reader what an nbdev site gives (a sticky sidebar in pipeline order, search, a table of contents per page, previous/next
links, highlighted code) and needs no network at build or read time (no web fonts, no CDN; maths is converted to MathML
at build time). Each processed notebook becomes one Markdown page, named as nbdev names it (`metrics.html`), so that
nbdev's links between pages (`metrics.html#vre`) resolve on this site too. `scripts/check_site.py` then opens the site in
headless Chromium. Material for MkDocs is supported until May 2027; its successor from the same team, Zensical, reads the
same mkdocs.yml, which this script writes into _site_src/.
"""
from __future__ import annotations
import base64, gc, html, importlib, inspect, os, re, shutil, subprocess, sys
from pathlib import Path

import yaml

root = Path(__file__).resolve().parent.parent
SOURCE = root / "_site_src"   # generated Markdown and MkDocs configuration (git-ignored)
OUT = root / "_docs"

def settings() -> dict:
    "settings.ini's [DEFAULT] section."
    import configparser
    cfg = configparser.ConfigParser(); cfg.read(root / "settings.ini")
    return dict(cfg["DEFAULT"])

def page_order() -> list[str]:
    "Notebook names in sidebar order."
    return re.findall(r"-\s+(\S+\.ipynb)", (root / "nbs" / "sidebar.yml").read_text())

# --- front matter, names ------------------------------------------------------------------------------------------

def front_matter(nb) -> dict:
    "The YAML front matter nbdev's processing puts in the first raw cell (title, description, output-file)."
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.lstrip().startswith("---"):
            return yaml.safe_load(cell.source.strip().strip("-")) or {}
    return {}

def page_name(nb_name: str, meta: dict) -> str:
    "The page's file stem: nbdev's `output-file` (e.g. `metrics`), so that nbdev's links stay valid."
    return Path(meta.get("output-file") or ("index.html" if nb_name == "index.ipynb" else nb_name)).stem

# --- markdown cells -----------------------------------------------------------------------------------------------

FENCE = re.compile(r"(^```.*?^```[ \t]*$|`[^`\n]+`)", re.M | re.S)

def outside_code(text: str, fn) -> str:
    "Apply `fn` to the parts of Markdown `text` that are not code (fenced blocks, inline code spans)."
    parts = FENCE.split(text)
    return "".join(p if i % 2 else fn(p) for i, p in enumerate(parts))

def tex_to_mathml(text: str) -> str:
    "`$$...$$` and `$...$` to MathML (rendered by the browser, no script, no network)."
    from latex2mathml.converter import convert
    text = re.sub(r"\$\$(.+?)\$\$", lambda m: convert(m.group(1).strip(), display="block"), text, flags=re.S)
    return re.sub(r"(?<![\\$\w])\$([^\s$](?:[^$\n]*?[^\s$])?)\$(?![\w$])", lambda m: convert(m.group(1)), text)

def rewrite_links(text: str, pages: dict, cfg: dict) -> str:
    "Links to nbdev's published pages and to notebooks become links between this site's pages; repository files link to GitHub."
    host = f"{cfg['doc_host'].rstrip('/')}{cfg['doc_baseurl'].rstrip('/')}/"
    text = re.sub(re.escape(host) + r"([\w.-]+?)\.html(#[^)\s]*)?", lambda m: f"{m.group(1)}.md{m.group(2) or ''}", text)
    def notebook_link(m):
        path, anchor = m.group(1), m.group(2) or ""
        stem = Path(path).name
        if stem in pages: return f"]({pages[stem]}.md{anchor})"
        return f"]({cfg['git_url']}/blob/{cfg.get('branch', 'main')}/{path.lstrip('./')}{anchor})"
    text = re.sub(r"\]\(((?:\.\./|\./|nbs/)?[\w./-]+?\.ipynb)(#[^)\s]*)?\)", notebook_link, text)
    # repository files (scripts, data) by relative path: to GitHub, since the site holds only pages
    text = re.sub(r"\]\((\.\./[\w./-]+)\)", lambda m: f"]({cfg['git_url']}/blob/{cfg.get('branch', 'main')}/{m.group(1)[3:]})", text)
    return re.sub(r"(\]\([^)]*\))\{[^}\n]*\}", r"\1", text)  # Quarto's link attributes ({target="_blank" ...})

def markdown_cell(source: str, pages: dict, cfg: dict) -> str:
    "A markdown cell as site Markdown: links rewritten, maths to MathML."
    return outside_code(rewrite_links(source, pages, cfg), tex_to_mathml)

# --- show_doc entries ---------------------------------------------------------------------------------------------

def symbol_index() -> dict:
    "nbdev's symbol index: (page, lower-cased name) -> dotted path of the symbol."
    from vqa_robust._modidx import d
    index = {}
    for module, syms in d["syms"].items():
        for dotted, (url, _) in syms.items():
            page, _, anchor = url.partition("#")
            index[(Path(page).stem, anchor)] = dotted
    return index

def resolve(dotted: str):
    "The object a dotted path names (module, then attributes)."
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try: obj = importlib.import_module(".".join(parts[:i]))
        except ImportError: continue
        for name in parts[i:]: obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)

def fmt_annotation(anno) -> str:
    "An annotation as written in the source."
    if anno is inspect.Parameter.empty: return ""
    return anno if isinstance(anno, str) else inspect.formatannotation(anno)

def fmt_default(default) -> str:
    "A default value as written in the source; a path inside the package relative to it (no machine's paths)."
    if default is inspect.Parameter.empty: return ""
    if isinstance(default, Path):
        package = (root / settings()["lib_path"]).resolve()
        if default.resolve().is_relative_to(package): return f"<{package.name}>/{default.resolve().relative_to(package)}"
    return default.__name__ if callable(default) and hasattr(default, "__name__") else repr(default)

def signature_block(obj, name: str) -> str:
    "A compact signature (`def name(a: int = 1) -> str`), one parameter per line when long."
    try: sig = inspect.signature(obj)
    except (TypeError, ValueError): return ""
    params = []
    for p in sig.parameters.values():
        if p.name == "self": continue
        star = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        anno, default = fmt_annotation(p.annotation), fmt_default(p.default)
        params.append(star + p.name + (f": {anno}" if anno else "") + ((" = " if anno else "=") + default if default else ""))
    ret = fmt_annotation(sig.return_annotation)
    kind = "class" if inspect.isclass(obj) else "def"
    one = f"{kind} {name}({', '.join(params)})" + (f" -> {ret}" if ret else "")
    if len(one) <= 88: return one
    return f"{kind} {name}(\n" + "".join(f"    {p},\n" for p in params) + ")" + (f" -> {ret}" if ret else "")

def inline_code(text: str) -> str:
    "Escape `text` for HTML, with `backticks` as code."
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))

def parameter_table(obj) -> str:
    "nbdev's Type/Default/Details table, from the signature and the parameters' comments (docments)."
    from fastcore.docments import docments
    try:
        doc = docments(obj, full=True)
        sig = inspect.signature(obj)
    except Exception: return ""
    rows = []
    for name, p in sig.parameters.items():
        if name == "self": continue
        d = doc.get(name, {})
        rows.append((name, fmt_annotation(p.annotation), fmt_default(p.default), d.get("docment") or ""))
    ret = doc.get("return", {}) if not inspect.isclass(obj) else {}
    ret_anno = fmt_annotation(sig.return_annotation) if not inspect.isclass(obj) else ""
    if ret_anno or ret.get("docment"): rows.append(("Returns", ret_anno, "", ret.get("docment") or ""))
    if not rows: return ""
    columns = [i for i in (1, 2, 3) if any(r[i] for r in rows)]  # as nbdev: no column that would be empty
    code = lambda v: f"<code>{html.escape(v)}</code>" if v else ""
    cell = {1: code, 2: code, 3: inline_code}
    head = "".join(f"<th>{('', 'Type', 'Default', 'Details')[i]}</th>" for i in columns)
    body = "".join(f"<tr><td><strong>{html.escape(r[0])}</strong></td>" + "".join(f"<td>{cell[i](r[i])}</td>" for i in columns) + "</tr>"
                   for r in rows)
    return f'<div class="doc-params-wrap"><table class="doc-params"><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table></div>'

def show_doc_entry(markdown: str, page: str, index: dict, pages: dict, cfg: dict) -> str:
    "nbdev's show_doc Markdown as a documentation entry: anchored heading, source link, signature, docstring, parameter table."
    heading = re.search(r"^(#+) (.+)$", markdown, re.M)
    if not heading: return markdown
    level, name = len(heading.group(1)), heading.group(2).strip()
    source = re.search(r"\[source\]\(([^)]+)\)", markdown)
    doc = markdown[markdown.find("```", heading.end()):]
    doc = doc[doc.find("```", 3) + 3:].strip() if doc.startswith("```") else markdown[heading.end():].strip()
    anchor = name.lower()
    dotted = index.get((page, anchor))
    try: obj = resolve(dotted) if dotted else None
    except Exception: obj = None
    sig = signature_block(obj, name) if obj is not None else ""
    if not sig:  # fall back to nbdev's own signature block
        m = re.search(r"```python\n(.*?)```", markdown, re.S)
        sig = m.group(1).strip() if m else ""
    out = ['<div class="doc-entry" markdown>', "",
           f"{'#' * level} {name} {{ #{anchor} .doc-heading }}", ""]
    if source: out += [f'<a class="doc-source" href="{html.escape(source.group(1))}">source</a>', ""]
    if sig: out += ["```python", sig, "```", ""]
    if doc: out += [markdown_cell(doc, pages, cfg), ""]
    table = parameter_table(obj) if obj is not None and callable(obj) else ""
    if table: out += [table, ""]
    out += ["</div>", ""]
    return "\n".join(out)

# --- code cells and outputs ---------------------------------------------------------------------------------------

def cell_options(source: str) -> tuple[dict, str]:
    "A code cell's `#| key: value` options and its source without them."
    opts, lines = {}, source.splitlines()
    while lines and lines[0].startswith("#|"):
        key, _, value = lines.pop(0)[2:].strip().partition(":")
        opts[key.strip()] = value.strip() or True
    return opts, "\n".join(lines).strip("\n")

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

def text_block(text: str) -> str:
    "Plain output text as a fenced block."
    text = ANSI.sub("", text).rstrip("\n")
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text}\n{fence}"

def output_markdown(output, assets: Path, stem: str, counter: list, pages: dict, cfg: dict) -> str:
    "One output of a code cell as Markdown or HTML: images to files, tables as HTML, text as blocks."
    if output.output_type == "stream":
        return text_block(output.text) if output.get("name") == "stdout" else ""
    if output.output_type == "error": return text_block("\n".join(output.get("traceback", [])))
    data = output.get("data", {})
    for mime, ext in (("image/png", "png"), ("image/jpeg", "jpg")):
        if mime in data:
            counter[0] += 1
            name = f"{stem}-{counter[0]}.{ext}"
            (assets / name).write_bytes(base64.b64decode(data[mime]))
            return f'<img class="cell-image" src="assets/{name}" alt="figure {counter[0]} of this page" loading="lazy">'
    if "image/svg+xml" in data: return "".join(data["image/svg+xml"])
    if "application/vnd.jupyter.widget-view+json" in data:
        return '<p class="widget-note">(an interactive widget: run the notebook in Jupyter to use it)</p>'
    if "text/html" in data:
        body = "".join(data["text/html"])
        body = re.sub(r"\n\s*\n", "\n", body)  # blank lines would end the HTML block in Markdown
        return f'<div class="output-html">\n{body}\n</div>'
    if "text/markdown" in data: return markdown_cell("".join(data["text/markdown"]), pages, cfg)
    if "text/plain" in data: return text_block("".join(data["text/plain"]))
    return ""

def code_cell(cell, page: str, assets: Path, counter: list, index: dict, pages: dict, cfg: dict) -> str:
    "A code cell as Markdown, honouring nbdev's and Quarto's cell options."
    opts, source = cell_options(cell.source)
    if opts.get("include") == "false" or "hide" in opts: return ""
    outputs = cell.get("outputs", [])
    if opts.get("output") == "asis" and re.match(r"show_doc\(", source):
        md = next(("".join(o["data"]["text/markdown"]) for o in outputs if "text/markdown" in o.get("data", {})), "")
        return show_doc_entry(md, page, index, pages, cfg)
    parts = []
    if opts.get("echo") != "false" and source: parts.append(f"```python\n{source}\n```")
    if opts.get("output") != "false":
        rendered = [output_markdown(o, assets, page, counter, pages, cfg) for o in outputs]
        rendered = [r for r in rendered if r]
        if rendered:
            parts.append('<div class="cell-output" markdown>\n\n' + "\n\n".join(rendered) + "\n\n</div>")
    return "\n\n".join(parts)

def notebook_page(nb_path: Path, pages: dict, index: dict, cfg: dict, out_dir: Path) -> tuple[str, str]:
    "Write one processed notebook as a Markdown page; returns (page file name, title)."
    import nbformat
    nb = nbformat.read(nb_path, as_version=4)
    meta = front_matter(nb)
    page = page_name(nb_path.name, meta)
    title = meta.get("title") or page
    assets = out_dir / "assets"; assets.mkdir(parents=True, exist_ok=True)
    counter = [0]
    head = {"title": title}
    if meta.get("description"): head["description"] = " ".join(str(meta["description"]).split())
    body = [f"---\n{yaml.safe_dump(head, allow_unicode=True, width=10**6).strip()}\n---", "", f"# {title}", ""]
    if head.get("description"): body += [f'<p class="subtitle" markdown>{markdown_cell(head["description"], pages, cfg)}</p>', ""]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if "AUTOGENERATED! DO NOT EDIT" in cell.source: continue
            body.append(markdown_cell(cell.source, pages, cfg))
        elif cell.cell_type == "code":
            body.append(code_cell(cell, page, assets, counter, index, pages, cfg))
    (out_dir / f"{page}.md").write_text("\n\n".join(b for b in body if b) + "\n")
    return f"{page}.md", title

def fix_anchors(md: Path) -> int:
    "Links to a symbol the target page does not document go to its class's entry, else to the page; returns how many changed."
    anchors = {f.name: set(re.findall(r"\{ #(\S+) \.doc-heading \}", f.read_text())) for f in md.glob("*.md")}
    changed = 0
    def fix(m):
        nonlocal changed
        page, anchor = m.group(1), m.group(2)
        if page not in anchors or anchor in anchors[page]: return m.group(0)
        changed += 1
        parent = anchor.rsplit(".", 1)[0]
        return f"]({page}#{parent})" if "." in anchor and parent in anchors[page] else f"]({page})"
    for f in md.glob("*.md"):
        f.write_text(re.sub(r"\]\(([\w.-]+\.md)#([^)\s]+)\)", fix, f.read_text()))
    return changed

# --- the site -----------------------------------------------------------------------------------------------------

EXTRA_CSS = """
.subtitle { font-size: 1.15em; color: var(--md-default-fg-color--light); margin-top: -0.6em; }
.doc-entry { border-top: 1px solid var(--md-default-fg-color--lightest); margin-top: 1.6em; padding-top: 0.2em; }
.doc-entry .doc-heading { font-family: var(--md-code-font-family); font-weight: 600; }
.doc-source { float: right; font-size: 0.75em; margin-top: 1.2em; }
table.doc-params { font-size: 0.75rem; border-collapse: collapse; width: 100%; margin: 0.6em 0 1em; }
table.doc-params th { text-align: left; font-weight: 600; border-bottom: 2px solid var(--md-default-fg-color--lighter); padding: 0.3em 0.6em; }
table.doc-params td { vertical-align: top; border-bottom: 1px solid var(--md-default-fg-color--lightest); padding: 0.3em 0.6em; }
table.doc-params td:first-child { white-space: nowrap; }
.doc-params-wrap { overflow-x: auto; max-width: 100%; }
table.doc-params td code { word-break: break-word; }
.cell-output { border-left: 3px solid var(--md-accent-fg-color--transparent, #dde); padding-left: 0.6em; margin: -0.4em 0 1em; }
.cell-output pre > code { background: transparent; }
.output-html { overflow-x: auto; max-width: 100%; font-size: 0.75rem; }
.output-html table { display: table; }
img.cell-image { max-width: 100%; height: auto; }
.md-typeset math[display="block"] { display: block; overflow-x: auto; margin: 1em 0; }
"""

def mkdocs_config(nav: list, cfg: dict) -> dict:
    "The MkDocs configuration: Material theme, offline (no web fonts), strict link and anchor checks."
    return {
        "site_name": cfg["lib_name"], "site_description": cfg["description"],
        "site_url": f"{cfg['doc_host'].rstrip('/')}{cfg['doc_baseurl'].rstrip('/')}/",
        "docs_dir": "md", "site_dir": str(OUT), "use_directory_urls": False, "strict": True,
        "validation": {"links": {"not_found": "warn", "anchors": "warn", "unrecognized_links": "warn", "absolute_links": "info"}},
        "theme": {"name": "material", "font": False, "language": "en",
                  "features": ["navigation.footer", "navigation.top", "navigation.tracking", "toc.follow",
                               "search.highlight", "search.suggest", "content.code.copy"],
                  "palette": {"primary": "indigo", "accent": "indigo"}},
        "extra": {"social": [{"icon": "fontawesome/brands/github", "link": cfg["git_url"]}], "generator": False},
        "extra_css": ["stylesheets/extra.css"],
        "markdown_extensions": ["tables", "attr_list", "md_in_html", "admonition", "footnotes", "pymdownx.details",
                                {"toc": {"permalink": True, "toc_depth": 3}},
                                {"pymdownx.highlight": {"use_pygments": True}}, "pymdownx.superfences"],
        "plugins": ["search"],
        "nav": nav,
    }

def build_offline(quiet: bool = False, reuse_proc: bool = False) -> Path:
    "nbdev's processing into _proc/, the pages into _site_src/md/, then `mkdocs build --strict` into _docs/."
    from nbdev.serve import proc_nbs
    cfg = settings()
    if not reuse_proc: proc_nbs(force=True, n_workers=0)  # every notebook again (nbdev's cache, keyed on the folder's mtime, kept stale pages of edited notebooks), in this process: the same _proc/ as nbdev's spawned workers, for about half the CPU (each worker imports the package again)
    gc.freeze()  # nbdev's shells (one a notebook) live until exit, when IPython's atexit runs gc.collect() once a shell: frozen, the objects made so far are not walked again each time (a third of the build's CPU)
    proc = root / "_proc"
    names = [n for n in page_order() if (proc / n).exists()]
    missing = [n for n in page_order() if not (proc / n).exists()]
    if missing: raise SystemExit(f"docs: sidebar.yml lists notebooks nbdev did not process: {missing}")
    import nbformat
    pages = {n: page_name(n, front_matter(nbformat.read(proc / n, as_version=4))) for n in names}
    shutil.rmtree(SOURCE, ignore_errors=True)
    md = SOURCE / "md"; (md / "stylesheets").mkdir(parents=True)
    (md / "stylesheets" / "extra.css").write_text(EXTRA_CSS)
    index = symbol_index()
    nav = []
    for n in names:
        file, title = notebook_page(proc / n, pages, index, cfg, md)
        nav.append({"Overview" if file == "index.md" else title: file})
    fix_anchors(md)
    (SOURCE / "mkdocs.yml").write_text(yaml.safe_dump(mkdocs_config(nav, cfg), sort_keys=False, allow_unicode=True))
    shutil.rmtree(OUT, ignore_errors=True)
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(SOURCE / "mkdocs.yml")] + (["-q"] if quiet else []),
                       cwd=SOURCE, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    sys.stderr.write(p.stderr)
    if p.returncode: raise SystemExit(f"docs: mkdocs build failed (exit {p.returncode})")
    print(f"docs: {len(nav)} pages built into {OUT.relative_to(root)}/")
    return OUT

if __name__ == "__main__":
    if "--quarto" in sys.argv: sys.exit(subprocess.call([str(Path(sys.executable).parent / "nbdev_docs")], cwd=root))
    build_offline(reuse_proc="--reuse-proc" in sys.argv)
