"""Mutation testing of the notebooks: change one parameter or operator of the exported code, run that notebook's tests, count what they catch.

The notebooks are the source (the library is their export), so mutants are made in a notebook's exported cells and judged by
`nbdev_test` on the mutated copy. Each mutant changes one thing: a number (a parameter table entry, a constant: n -> n + 1,
x -> 1.1 x), an arithmetic operator (+ <-> -, * <-> /), a comparison (< <-> <=, > <-> >=, == <-> !=) or a boolean constant.
A mutant is *killed* when the notebook's tests fail (or time out); a *survivor* is a change no test noticed. Mutants are drawn
with a seeded generator from all candidates, so a report is reproducible.

    python scripts/mutants.py                                   # 04_metrics, 04_robustness, 03_inference, 01c_imagenet_c, 20 mutants each
    python scripts/mutants.py nbs/04_metrics.ipynb --n 50 --seed 1
"""
import argparse, ast, json, os, random, subprocess, sys, tempfile, time
from pathlib import Path

root = Path(__file__).resolve().parent.parent
bin_dir = Path(sys.executable).parent
DEFAULT_TARGETS = ["nbs/04_metrics.ipynb", "nbs/04_robustness.ipynb", "nbs/03_inference.ipynb", "nbs/01c_imagenet_c.ipynb"]
SWAPS = {ast.Add: "-", ast.Sub: "+", ast.Mult: "/", ast.Div: "*", ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "=="}
SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}

def is_exported(source: str) -> bool: return any(line.strip() in ("#| export", "#| exporti") for line in source.splitlines()[:3])

def line_offsets(source: str) -> list[int]:
    "Character offset of each line's start."
    offsets, total = [0], 0
    for line in source.splitlines(True): total += len(line); offsets.append(total)
    return offsets

def candidates(source: str) -> list[tuple[int, int, str, str]]:
    "Mutations of one cell's code: (start, end, replacement, description), by character offsets."
    code = "\n".join("" if l.startswith("#|") else l for l in source.splitlines())
    try: tree = ast.parse(code)
    except SyntaxError: return []
    at, found = line_offsets(code), []
    span = lambda node: (at[node.lineno - 1] + node.col_offset, at[node.end_lineno - 1] + node.end_col_offset)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Module)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings:
            start, end = span(node)
            if isinstance(node.value, bool): found.append((start, end, str(not node.value), f"{node.value} -> {not node.value}"))
            elif isinstance(node.value, int): found.append((start, end, str(node.value + 1), f"{node.value} -> {node.value + 1}"))
            elif isinstance(node.value, float) and node.value != 0: found.append((start, end, repr(node.value * 1.1), f"{node.value} -> {node.value * 1.1:.4g}"))
        elif isinstance(node, ast.BinOp) and type(node.op) in SWAPS:
            left_end, right_start = span(node.left)[1], span(node.right)[0]
            between = code[left_end:right_start]
            symbol = SYMBOLS[type(node.op)]
            if between.count(symbol) == 1 and not (symbol in "*/" and "**" in between) and "//" not in between:
                k = left_end + between.index(symbol)
                found.append((k, k + len(symbol), SWAPS[type(node.op)], f"{symbol} -> {SWAPS[type(node.op)]}"))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in SWAPS:
            left_end, right_start = span(node.left)[1], span(node.comparators[0])[0]
            between = code[left_end:right_start]
            symbol = SYMBOLS[type(node.ops[0])]
            if between.strip() == symbol:
                k = left_end + between.index(symbol)
                found.append((k, k + len(symbol), SWAPS[type(node.ops[0])], f"{symbol} -> {SWAPS[type(node.ops[0])]}"))
    return found

def restore_directives(original: str, mutated_code: str) -> str:
    "Put the cell's `#|` lines back (they were blanked for parsing, so offsets match line for line)."
    return "\n".join(o if o.startswith("#|") else m for o, m in zip(original.splitlines(), mutated_code.splitlines()))

def mutants(nb: dict, n: int, seed: int) -> list[dict]:
    "A seeded sample of `n` one-change mutants of the notebook's exported cells."
    pool = []
    for index, cell in enumerate(nb["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or not is_exported(source): continue
        code = "\n".join("" if l.startswith("#|") else l for l in source.splitlines())
        for start, end, new, what in candidates(source):
            line = code[:start].count("\n") + 1
            pool.append({"cell": index, "cell_id": cell.get("id"), "line": line, "what": what,
                         "source": restore_directives(source, code[:start] + new + code[end:]), "context": code.splitlines()[line - 1].strip()[:100]})
    random.Random(seed).shuffle(pool)
    return pool[:n]

def killed(nb_path: Path, nb: dict, mutant: dict, timeout: int) -> tuple[bool, str]:
    "Run the notebook's tests on a copy carrying the mutant: killed when they fail."
    copy = json.loads(json.dumps(nb))
    copy["cells"][mutant["cell"]]["source"] = mutant["source"].splitlines(True)
    with tempfile.NamedTemporaryFile("w", suffix=".ipynb", prefix="_mutant_", dir=nb_path.parent, delete=False) as f:
        json.dump(copy, f)
    try:
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        p = subprocess.run([str(bin_dir / "nbdev_test"), "--path", str(Path(f.name).relative_to(root))], cwd=root, capture_output=True,
                           text=True, timeout=timeout, env=env)
        return p.returncode != 0, "tests failed" if p.returncode else "tests passed"
    except subprocess.TimeoutExpired: return True, "timed out"
    finally: os.unlink(f.name)

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="*", default=DEFAULT_TARGETS)
    ap.add_argument("--n", type=int, default=20, help="mutants per notebook")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per mutant run")
    args = ap.parse_args()
    total_killed = total = 0
    for name in args.notebooks:
        path = (root / name).resolve()
        nb = json.loads(path.read_text())
        sample, start, caught = mutants(nb, args.n, args.seed), time.time(), 0
        for m in sample:
            dead, why = killed(path, nb, m, args.timeout)
            caught += dead
            print(f"{'KILLED  ' if dead else 'SURVIVED'} {path.name} cell {m['cell_id']} line {m['line']}: {m['what']:<14} | {m['context']} ({why})", flush=True)
        print(f"{path.name}: {caught}/{len(sample)} mutants killed ({time.time() - start:.0f} s)", flush=True)
        total_killed, total = total_killed + caught, total + len(sample)
    print(f"mutation score: {total_killed}/{total} killed ({100 * total_killed / max(total, 1):.0f}%)")

if __name__ == "__main__":
    main()
