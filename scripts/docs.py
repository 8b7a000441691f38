"""Build the documentation site.

With Quarto installed, `nbdev_docs` builds the full site from `_quarto.yml`. Quarto cannot always be installed (it downloads
a binary at install time), so this script is the offline path: nbdev's own notebook processing (`proc_nbs`: directives,
show_doc, hidden cells) into `_proc/`, then each processed notebook rendered to static HTML by nbconvert into `_docs/`.

    python scripts/docs.py            # offline build into _docs/
    python scripts/docs.py --quarto   # nbdev_docs (needs Quarto)
"""
import html, re, shutil, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - vqa_robust</title><style>
body {{ font-family: system-ui, sans-serif; margin: 0; display: flex; color: #222; }}
nav {{ width: 14rem; padding: 1rem; background: #f4f6f8; min-height: 100vh; flex-shrink: 0; }}
nav a {{ display: block; padding: .25rem 0; color: #2c5d9c; text-decoration: none; }} nav a.here {{ font-weight: bold; }}
main {{ max-width: 60rem; padding: 1rem 2rem; overflow-x: auto; }}
pre {{ background: #f6f8fa; padding: .6rem; overflow-x: auto; font-size: .85rem; }}
.jp-OutputArea-output pre, .output_text pre {{ background: #fff; border-left: 3px solid #dde; }}
table {{ border-collapse: collapse; font-size: .85rem; }} td, th {{ border: 1px solid #ddd; padding: .2rem .5rem; }}
img {{ max-width: 100%; }} .jp-InputPrompt, .jp-OutputPrompt, .prompt {{ display: none; }}
</style></head><body><nav><b>vqa_robust</b>{nav}</nav><main>{body}</main></body></html>"""

def page_order() -> list[str]:
    "Notebook names in sidebar order."
    sidebar = (root / "nbs" / "sidebar.yml").read_text()
    return re.findall(r"-\s+(\S+\.ipynb)", sidebar)

def title_of(nb_path: Path) -> str:
    import nbformat
    for cell in nbformat.read(nb_path, as_version=4).cells:
        m = re.search(r"^#\s+(.+)$", cell.source, re.M) if cell.cell_type == "markdown" else None
        if m: return m.group(1).strip()
    return nb_path.stem

def build_offline(out: Path = root / "_docs"):
    from nbdev.serve import proc_nbs
    from nbconvert import HTMLExporter
    proc_nbs()
    proc = root / "_proc"
    names = [n for n in page_order() if (proc / n).exists()]
    titles = {n: title_of(proc / n) for n in names}
    exporter = HTMLExporter(template_name="basic")
    out.mkdir(exist_ok=True)
    for name in names:
        body, _ = exporter.from_filename(str(proc / name))
        target = "index.html" if name == "index.ipynb" else name.replace(".ipynb", ".html")
        nav = "".join(f'<a href="{"index.html" if n == "index.ipynb" else n.replace(".ipynb", ".html")}"{" class=here" if n == name else ""}>{html.escape(titles[n])}</a>' for n in names)
        (out / target).write_text(PAGE.format(title=html.escape(titles[name]), nav=nav, body=body))
        print(f"wrote {out / target}")

if __name__ == "__main__":
    if "--quarto" in sys.argv: sys.exit(subprocess.call([str(Path(sys.executable).parent / "nbdev_docs")], cwd=root))
    build_offline()
