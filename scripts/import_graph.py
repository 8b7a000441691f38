"""The import graph of vqa_robust, with imports inside functions, checked against the package's floors.

    python scripts/import_graph.py          # print every module's imports of the package, then the problems (exit 1 if any)

A module may import only modules on lower floors: no cycle, and no import that runs back up. Imports inside functions
count like any other (they are marked `inner`). Floors, bottom up; modules on one floor do not import each other. A module
importing itself by name (the generator does, so that child processes can unpickle its task function) ties it to nothing
else: it is listed, and not a problem.
"""
import ast, sys
from pathlib import Path

FLOORS = [  # bottom up
    ["base"],                  # registry, seeded generator, number checks, task maps
    ["vocabulary", "parallel"],  # answer normalisation, number and colour words, negation; a function mapped over tasks in processes or Ray
    ["corruption_core"],       # the corruption registry, reading any image, seeding, `corrupt`, the shared table lookups
    ["imagenet_c", "geometric", "capture"],  # corruption families: ImageNet-C; VLM-RobustBench's geometric and Res-Bench; MMD-Bench's capture
    ["vrb_corruptions"],       # VRB's appendix effects and its code's forms (on ImageNet-C's kernels)
    ["corruptions"],           # every family registered: the presets, the provenance table, warming the kernels
    ["vqav2"],  
    ["metrics"],
    ["robustness"],            # VRB's sub-metrics, VRE and Table 1's accuracies, from an accuracy table
    ["intervals"],             # the paired bootstrap over images: intervals of accuracy, sub-metrics and VRE
    ["calibration", "flips", "consistency", "field_measures", "resolution", "comparisons"],  # beyond VRB, side by side: calibration, flips, consistency across severities, mCE and effective robustness, Res-Bench's resolution curve, paired comparisons of models
    ["discrimination"],        # discriminative questions (their flip rate is flips' answer flip)
    ["answerability"],         # VizWiz's answerability task: average precision and F1 of saying "unanswerable"
    ["datasets"],
    ["text"],                  # question perturbations (WordNet, colours, typos)
    ["question_corruptions"],  # character- and word-level question corruptions at five severities (registered in text's registry)
    ["defences"],              # what stands between the corruption and the model: image and text defences
    ["store"],                 # run folders: chunks, records, atomic writes, fingerprints
    ["generator"],
    ["models"],                # the interface and what every family shares
    ["vilt", "blip"],          # the families transformers ships whole
    ["vle", "pnp", "vlms"],    # the other families
    ["vle_family"],            # VLE's family and entries, light: its loader imports vle at the first VLE load
    ["served"],                # any OpenAI-compatible endpoint as a model (the chat VLMs' prompt and answer cleaning)
    ["harnesses"],             # a benchmark under every condition in lmms-eval's and VLMEvalKit's layouts, with the served models' prompts
    ["hf_dataset"],            # the same benchmark as a Hugging Face `datasets` folder: a config per condition, its card
    ["zoo"],                   # the registries of families and entries, loading by name
    ["model_input"],           # what each model saw: a corruption in the image and in its family's views (FAMILIES)
    ["training"],
    ["inference"],
    ["distributed"],
    ["text_eval"],
    ["analysis"],
    ["hub_results"],           # a run's tables as the Hub's .eval_results files and a leaderboard.json (the store's atomic writes)
    ["combine"],               # runs made apart, ranked together (analysis' tables, metrics' bootstrap, the store's atomic writes)
    ["changes"],
    ["explain"],
    ["parameters"],            # the run's parameters, written once, and their checks; the checked run (RunConfig)
    ["questions"],             # the run's split, the blind baseline's answers, the corrupted question sets
    ["results"],               # the run folder: scores and the result sections
    ["run"],
    ["harness_scoring"],       # a harness's predictions for an export, scored as a run
    ["report"],                # one HTML page of a run's (or runs') results: charts, ranking, the gallery of changed answers
    ["cli"],                   # the vqa-robust command over the library's functions
    ["testing"],               # test doubles: a chat server that needs no model
    ["testing_data"],          # test scaffolding: a few records in each benchmark's layout, and their writers by name
    ["testing_vlms"],          # test scaffolding: tiny checkpoints of the chat VLMs, a builder per architecture
    ["testing_models"],        # test scaffolding: every family's tiny checkpoint writer by name, tiny_checkpoint, hub_smoke
]
PACKAGE = "vqa_robust"

def package_imports(path: Path, modules: set) -> list[tuple[str, str]]:
    "(imported module, 'top' or 'inner:LINE') for every import of a package module in one file."
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom):
            if node.level == 1: names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            elif node.module == PACKAGE: names = [a.name for a in node.names]
            elif node.module and node.module.startswith(PACKAGE + "."): names = [node.module.split(".")[1]]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".")[1] for a in node.names if a.name.startswith(PACKAGE + ".")]
        found += [(n, "top" if id(node) in top else f"inner:{node.lineno}") for n in names if n in modules]
    return found

def import_graph(package_dir: Path) -> dict:
    "module -> [(imported module, where)] for every module of the package (`__init__` and `_modidx` left out)."
    files = {p.stem: p for p in sorted(package_dir.glob("*.py")) if not p.stem.startswith("_")}
    return {m: sorted(set(package_imports(p, set(files)))) for m, p in files.items()}

def floor_of(module: str) -> int | None:
    "The floor a module lives on (None: not placed)."
    return next((i for i, floor in enumerate(FLOORS) if module in floor), None)

def problems(graph: dict) -> list[str]:
    "Modules without a floor, and imports that do not go strictly down (which rules out every cycle)."
    found = [f"{m}: not on any floor of FLOORS" for m in graph if floor_of(m) is None]
    found += [f"{m} -> {t} ({where}): {'same floor' if floor_of(m) == floor_of(t) else 'runs back up'}"
              for m, targets in graph.items() for t, where in targets
              if t != m and floor_of(m) is not None and floor_of(t) is not None and floor_of(t) >= floor_of(m)]
    return found

def main() -> int:
    graph = import_graph(Path(__file__).resolve().parent.parent / PACKAGE)
    for floor in FLOORS:
        for m in floor:
            if m in graph:
                shown = ", ".join(t + ("" if w == "top" else f" ({w})") for t, w in graph[m])
                print(f"{floor_of(m):2d} {m:12s} -> {shown or '(nothing of the package)'}")
    found = problems(graph)
    inner = sum(w != "top" for targets in graph.values() for _, w in targets)
    print(f"{len(graph)} modules, {sum(len(t) for t in graph.values())} imports ({inner} inside functions), {len(found)} problem(s)")
    for p in found: print("PROBLEM", p)
    return 1 if found else 0

if __name__ == "__main__": sys.exit(main())
