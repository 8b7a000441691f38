"""The notebooks' rhythm (fastcore's): each export cell small, and each definition followed by its example and its test.

For every `#| export` cell of the numbered notebooks it checks that
  - the cell has at most MAX_LINES lines;
  - every public definition in it (a top-level `def` or `class`, `@patch`ed methods included; names starting with `_` are
    private helpers and exempt) is named in the code cells between it and the next export cell: its example and its test;
  - those cells hold at least one test (`test_eq`, `test_close`, `test_fail`, ..., or `assert`).

    python scripts/notebook_rhythm.py                  # every notebook: a line each, then the problems; exit 1 if any
    python scripts/notebook_rhythm.py nbs/04_metrics.ipynb
    python scripts/notebook_rhythm.py --todo           # rewrite TODO_FILE with today's counts (they may only go down)

Notebooks written before the checker still break it in places: TODO_FILE holds how many problems each may have, and the
test (tests/test_notebook_rhythm.py) fails when a notebook has more (a regression) or fewer (lower its count: a ratchet).
A notebook not listed there must have none.
"""
import ast, json, re, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
TODO_FILE = root / "tests" / "fixtures" / "notebook_rhythm_todo.json"
MAX_LINES = 40
TEST_CALL = re.compile(r"\b(test_eq|test_ne|test_close|test_fail|test_is|test_eq_type|test_warns|test_stdout|test_shuffled|assert)\b")

def is_export(source: str) -> bool: return re.match(r"#\|\s*export", source) is not None

def code_cells(path: Path) -> list[tuple[str, str]]:
    "(id, source) of each code cell, in order."
    return [(c.get("id", "?"), "".join(c["source"])) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]

def public_definitions(source: str) -> list[str]:
    "Names of the public top-level functions and classes a cell defines."
    body = ast.parse(source).body
    return [n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not n.name.startswith("_") and not is_error_class(n)]

def is_error_class(node) -> bool:
    "An exception class: its test is the failure of the function that raises it, which need not name it."
    return isinstance(node, ast.ClassDef) and any(re.search(r"(Error|Exception|Warning)$", ast.unparse(b)) for b in node.bases)

def parsed(source: str):
    "A cell's code as an AST (IPython magics and shell lines left out), or None where it is not Python."
    try: return ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError: return None

def names_in(source: str) -> set[str]:
    "Every name and attribute a cell's code mentions."
    tree = parsed(source)
    if tree is None: return set(re.findall(r"[A-Za-z_]\w*", source))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}

def tests_something(source: str) -> bool:
    "Whether a cell's code holds a test: an `assert`, or a call of fastcore's `test_*` (not the word in a comment or a string)."
    tree = parsed(source)
    if tree is None: return TEST_CALL.search(source) is not None
    return any(isinstance(n, ast.Assert) or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and TEST_CALL.fullmatch(n.func.id) is not None)
               for n in ast.walk(tree))

def problems(path: Path) -> list[str]:
    "What breaks the rhythm in one notebook, a line each."
    cells, found = code_cells(path), []
    exports = [i for i, (_, s) in enumerate(cells) if is_export(s)]
    for k, i in enumerate(exports):
        cid, source = cells[i]
        after = cells[i + 1:exports[k + 1] if k + 1 < len(exports) else len(cells)]
        lines = len(source.splitlines())
        if lines > MAX_LINES: found.append(f"{path.name} cell {cid}: {lines} lines (at most {MAX_LINES})")
        defined = public_definitions(source)
        if not defined: continue
        named = set().union(*(names_in(s) for _, s in after)) if after else set()
        missing = [d for d in defined if d not in named]
        if missing: found.append(f"{path.name} cell {cid}: not shown or tested before the next export cell: {', '.join(missing)}")
        if not any(tests_something(s) for _, s in after): found.append(f"{path.name} cell {cid}: no test follows ({', '.join(defined)})")
    return found

def notebooks() -> list[Path]:
    "The library's notebooks: the numbered ones (index and run hold no export cells)."
    return sorted(p for p in (root / "nbs").glob("[0-9]*.ipynb"))

def todo() -> dict[str, int]:
    "Notebook name -> the problems it may still have."
    return json.loads(TODO_FILE.read_text()) if TODO_FILE.is_file() else {}

def write_todo() -> dict[str, int]:
    "TODO_FILE with each notebook's count today (those with none left out)."
    counts = {p.name: n for p in notebooks() if (n := len(problems(p)))}
    TODO_FILE.write_text(json.dumps(counts, indent=1) + "\n")
    return counts

def main(paths: list[str]) -> int:
    if paths == ["--todo"]: print(f"{TODO_FILE.name}: {sum(write_todo().values())} problem(s) left"); return 0
    found = []
    for path in [Path(p) for p in paths] or notebooks():
        own = problems(path); found += own
        print(f"{path.name:40s} {len(own):4d} problem(s)")
    print(*found, sep="\n")
    print(f"{len(found)} problem(s)")
    return int(bool(found))

if __name__ == "__main__": sys.exit(main(sys.argv[1:]))
