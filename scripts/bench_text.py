"""Benchmark the question corruptions (vqa_robust.question_corruptions) against nlpaug, side by side in one run.

    python scripts/bench_text.py                 # 2,000 easy-VQA questions, severity 3, every corruption
    python scripts/bench_text.py --n 5000 --severity 5
    python scripts/bench_text.py --wordnet       # loading WordNet: nltk's own reader against text.wordnet, each in fresh processes

Both on one core, timed in CPU seconds (time.process_time) over the same questions. Ours: `text.perturb` per question
(seeded by the run seed, the question's id, the kind and the severity: what a run does). nlpaug (pip install --no-deps nlpaug==1.1.11 gdown:
no other dependency needed for these augmenters) with the nearest augmenter and share of words it has: KeyboardAug, OcrAug,
RandomCharAug(insert, delete, substitute, swap), RandomWordAug(delete, swap), SynonymAug(wordnet) and SpellingAug (given
codespell's misspellings, read backwards as char_misspelling reads them, in its one-line-a-word format); it has no filler
insertion, punctuation or sentence-level augmenter ("n/a"). nlpaug draws from Python's global `random`, seeded once here
(its draws are not per question). The sentence-level kinds take no severity; spaCy's parse cache (and the word targets') is emptied before each
kind, so that no kind is timed on parses another made. The kinds that read the parse (`Perturbation.parses`) are timed as
`perturb_dataset` runs them: the questions parsed together first (`parse.many`), inside the timing. What a run loads once
(spaCy's pipeline, WordNet with its SemCor counts, lemminflect's tables) is loaded before any timing.
Prints questions per second for each, and their ratio; then spaCy's own rate on distinct questions, the bound of the kinds
that parse on a dataset whose questions do not repeat (easy-VQA's 2,000 questions hold about 100 distinct ones).
"""
import argparse, os, random, statistics, subprocess, sys, tempfile, time
os.environ.setdefault("OMP_NUM_THREADS", "1")
from vqa_robust.vqav2 import load_easy_vqa
from vqa_robust.question_corruptions import QUESTION_CORRUPTIONS, SEVERITY_RATES, misspellings
from vqa_robust.text import PERTURBATIONS, english_pipeline, lemminflect, parse, perturb, word_targets, wordnet

def nlpaug_augmenters(rate: float) -> dict:
    "kind -> an nlpaug augmenter at the nearest setting (one character per chosen word, `rate` of the words), or {} without nlpaug."
    try:
        import nlpaug.augmenter.char as nac, nlpaug.augmenter.word as naw
    except ImportError: return {}
    char = dict(aug_word_p=rate, aug_char_max=1, aug_char_p=1.0, aug_word_max=100)
    return {"char_keyboard": nac.KeyboardAug(**char, include_special_char=False, include_numeric=False),
            "char_ocr": nac.OcrAug(**char),
            **{f"char_{ours}": nac.RandomCharAug(action=theirs, **char) for ours, theirs in
               (("insert", "insert"), ("delete", "delete"), ("replace", "substitute"), ("swap", "swap"))},
            "word_delete": naw.RandomWordAug(action="delete", aug_p=rate, aug_max=100),
            "word_swap": naw.RandomWordAug(action="swap", aug_p=rate, aug_max=100), **word_level(naw, rate)}

def word_level(naw, rate: float) -> dict:
    "nlpaug's WordNet synonyms and its spelling augmenter on codespell's misspellings (each left out where it cannot start)."
    found = {}
    try: wordnet(); found["word_synonym"] = naw.SynonymAug(aug_src="wordnet", aug_p=rate, aug_max=100)
    except Exception as e: print(f"nlpaug SynonymAug: n/a ({type(e).__name__})")
    lines = "".join(f"{word} {' '.join(wrong)}\n" for word, wrong in misspellings().items())
    path = os.path.join(tempfile.mkdtemp(), "spelling_en.txt"); open(path, "w").write(lines)
    try: found["char_misspelling"] = naw.SpellingAug(dict_path=path, aug_p=rate, aug_max=100)
    except Exception as e: print(f"nlpaug SpellingAug: n/a ({type(e).__name__})")
    return found

def load_once():
    "What a run loads once, before its first question: spaCy's pipeline, WordNet and its SemCor counts, lemminflect's tables."
    parse("What is the man holding?"); parse.cache_clear()
    wordnet().synsets("dog")[0].lemmas()[0].count()
    lemminflect().getLemma("dogs", "NOUN"); lemminflect().getInflection("run", tag="VBD"); lemminflect().getAllInflections("run")

WORDNET_LOADS = {  # code run in a fresh process, printing the CPU seconds its load took and a fact both readers must agree on
    "nltk.corpus.wordnet": "from nltk.corpus import wordnet as wn",
    "text.wordnet": "from vqa_robust.text import wordnet; wn = wordnet()",
}

def wordnet_load_seconds(setup: str) -> tuple[float, str]:
    "CPU seconds to load WordNet in a fresh interpreter (nltk imported before the clock starts), and the hypernyms of dog.n.01 it reads."
    code = ("import time, nltk, nltk.corpus, vqa_robust.text as T; T.wordnet_root(); start = time.process_time(); " + setup +
            "; wn.get_version(); print(time.process_time() - start, sorted(h.name() for h in wn.synset('dog.n.01').hypernyms()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(maxsplit=1)
    return float(out[0]), out[1].strip()

def bench_wordnet(repeats: int = 5):
    "nltk's own WordNet reader against `text.wordnet` (no map from WordNet 3.0 onto itself), loaded `repeats` times each, interleaved."
    times = {name: [] for name in WORDNET_LOADS}; facts = set()
    for _ in range(repeats):
        for name, setup in WORDNET_LOADS.items():
            seconds, fact = wordnet_load_seconds(setup); times[name].append(seconds); facts.add(fact)
    if len(facts) != 1: raise SystemExit(f"the readers disagree: {facts}")
    base = statistics.median(times["nltk.corpus.wordnet"])
    print(f"WordNet 3.0 loaded {repeats} times each in fresh processes (CPU seconds, median [min, max]); both read dog.n.01's hypernyms as {facts.pop()}")
    for name, t in times.items():
        print(f"{name:20} {statistics.median(t):5.2f} [{min(t):.2f}, {max(t):.2f}]  {base / statistics.median(t):4.2f}x nltk's speed")

def rate_of(f, questions: list, ahead=None) -> float:
    "Questions per CPU second of f over `questions` (after `ahead` of all their texts, timed too, where given)."
    start = time.process_time()
    if ahead: ahead([q for _, q in questions])
    for q in questions: f(q)
    return len(questions) / (time.process_time() - start)

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000); parser.add_argument("--severity", type=int, default=3)
    parser.add_argument("--wordnet", action="store_true", help="time loading WordNet instead: nltk's reader against text.wordnet")
    args = parser.parse_args()
    if args.wordnet: bench_wordnet(); sys.exit()
    data = load_easy_vqa("test").questions.head(args.n)
    questions = list(zip(data.question_id.tolist(), data.question.tolist()))
    theirs = nlpaug_augmenters(SEVERITY_RATES[args.severity])
    random.seed(0)
    print(f"{len(questions)} easy-VQA questions, severity {args.severity} (share {SEVERITY_RATES[args.severity]}), one core; questions per second")
    print(f"{'corruption':18} {'ours':>10} {'nlpaug':>10} {'ratio':>7}")
    slowest = float("inf")
    load_once()
    for kind in QUESTION_CORRUPTIONS:
        parse.cache_clear(); word_targets.cache_clear()
        level = args.severity if PERTURBATIONS[kind].severities else None
        ours = rate_of(lambda qa: perturb(qa[1], kind, seed=0, question_id=qa[0], severity=level), questions,
                       ahead=parse.many if PERTURBATIONS[kind].parses else None)
        slowest = min(slowest, ours)
        other = None
        if kind in theirs:
            try: theirs[kind].augment(questions[0][1]); other = rate_of(lambda qa: theirs[kind].augment(qa[1]), questions)
            except LookupError as e: print(f"nlpaug on {kind}: n/a (nltk data it needs is not installed: {str(e).split(chr(10))[1].strip()[:60]})")
        print(f"{kind:18} {ours:10,.0f} {other:10,.0f} {ours / other:6.1f}x" if other else f"{kind:18} {ours:10,.0f} {'n/a':>10} {'':>7}")
    print(f"slowest of ours: {slowest:,.0f} questions a second on one core")
    distinct = sorted(set(q for _, q in questions))
    one_by_one = rate_of(lambda qa: english_pipeline()(qa[1]), [(0, q) for q in distinct])
    together = rate_of(lambda q: None, [(0, q) for q in distinct], ahead=lambda qs: list(english_pipeline().pipe(qs, batch_size=256)))
    print(f"spaCy's parse of {len(distinct)} distinct questions: {together:,.0f} a second together (nlp.pipe), {one_by_one:,.0f} one at a time")
