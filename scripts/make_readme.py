"""Write README.md from nbs/index.ipynb without Quarto (nbdev_readme needs it). `--check` fails if README.md is stale."""
import json, re, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def cell_markdown(cell) -> str:
    "One notebook cell as Markdown: prose as is, code fenced, text outputs fenced; hidden cells dropped."
    source = "".join(cell["source"])
    if cell["cell_type"] == "markdown": return source
    lines = source.splitlines()
    if any(re.match(r"#\|\s*(hide|exporti?|include:\s*false)", l) for l in lines): return ""
    code = "\n".join(l for l in lines if not l.startswith("#|")).strip()
    parts = [f"```python\n{code}\n```"] if code else []
    for out in cell.get("outputs", []):
        text = out.get("text") or out.get("data", {}).get("text/markdown") or out.get("data", {}).get("text/plain")
        if text: parts.append("```\n" + "".join(text).rstrip() + "\n```")
    return "\n\n".join(parts)

def readme_text() -> str:
    nb = json.loads((root / "nbs" / "index.ipynb").read_text())
    body = "\n\n".join(t for t in (cell_markdown(c).strip() for c in nb["cells"]) if t)
    body = re.sub(r"^> (.*)$", r"> \1", body, flags=re.M)
    return "<!-- Generated from nbs/index.ipynb by scripts/make_readme.py: edit the notebook, not this file. -->\n\n" + body + "\n"

if __name__ == "__main__":
    text, readme = readme_text(), root / "README.md"
    if "--check" in sys.argv:
        if readme.read_text() != text: sys.exit("FAIL README.md is not up to date with nbs/index.ipynb: run python scripts/make_readme.py")
        print("PASS README.md up to date")
    else:
        readme.write_text(text); print(f"wrote {readme}")
