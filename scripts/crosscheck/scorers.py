"""Reference fixtures for the benchmark scorers, made by RUNNING each benchmark's official scoring code.

The official functions are read at run time from local bare git mirrors (`git --git-dir MIRROR show COMMIT:PATH`); `ast`
picks the named top-level definitions, `ast.get_source_segment` cuts them out (a decorator, where one is named below, is
left out: a function node's segment starts at its `def`) and they are `exec`uted in a namespace that holds the imports
they use. No copy of the official source is kept in this repository; only their verdicts are.

Command (from the repository root):

    python scripts/crosscheck/scorers.py --mirrors /work/.mirror --out tests/fixtures/crosscheck/scorers

Each mirror is MIRRORS/<owner>+<name>/repo (a bare git directory). The environment variable VERBOSE is removed before
VLMEvalKit's matcher runs (as VLMEvalKit runs by default). Inputs are drawn with `random.Random(0)` (one fresh generator
per fixture), so two runs write byte-identical files; the `generated` date of a fixture is kept when its content did not
change. Every file is `{"cases": [...], "provenance": {...}}`, one case per line, keys sorted.

Fixtures (tests/fixtures/crosscheck/scorers/):

- textvqa.json -- facebookresearch/mmf @ b0ffc7fba39f210f833c127362146aec01a2f259, mmf/utils/m4c_evaluators.py:
  classes EvalAIAnswerProcessor, TextVQAAccuracyEvaluator.
  case {prediction, answers[10], score, processed_prediction}; score =
  TextVQAAccuracyEvaluator().eval_pred_list([{"pred_answer": prediction, "gt_answers": answers}]),
  processed_prediction = EvalAIAnswerProcessor()(prediction).
- docvqa_anls.json -- EvolvingLMMs-Lab/lmms-eval @ 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3, lmms_eval/api/metrics.py:
  functions levenshtein_distance, anls (its @register_metric decorator left out).
  case {prediction, answers[1-3], score}; score = anls(answers, [prediction])["anls"].
- chartqa.json -- EvolvingLMMs-Lab/lmms-eval @ 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3,
  lmms_eval/tasks/chartqa/utils.py: relaxed_correctness(prediction, target); and google-research/pix2struct @
  945f27e936c9464d9d7c133f1bd1f4f383be9e99, pix2struct/metrics.py: relaxed_correctness(target, prediction).
  case {prediction, target, correct (lmms-eval), correct_pix2struct}.
- mmbench_vlmevalkit.json -- open-compass/VLMEvalKit @ e8e78f05f3080fe28154f2130321f17951c3be94,
  vlmeval/utils/matching_util.py: _VERBOSE_ANSWER_RE, can_infer_option, can_infer_text, can_infer.
- mmbench_vlmevalkit_2025_04.json -- open-compass/VLMEvalKit @ aca64dbb3113ebf09683e379c65fb8b5107cba3f (aca64dbb),
  vlmeval/utils/matching_util.py: can_infer_option, can_infer_text, can_infer.
  Both: case {answer, options, choice}; choice = can_infer(answer, dict(options)) (false where it returns False); the
  two files hold the same inputs in the same order.
- mmbench_circular.json -- open-compass/VLMEvalKit @ e8e78f05f3080fe28154f2130321f17951c3be94,
  vlmeval/dataset/utils/multiple_choice.py: build_choices, prefetch_answer, prefetch_circular_group, mcq_circular_eval
  (with the matcher above, and vlmeval/smp/misc.py: istype, timestr; vlmeval/smp/file.py: get_pred_file_format).
  case {rotations: [{answer, options, gt, prefetched}], hit}; hit from mcq_circular_eval(None, data, meta, 1,
  result_file) (VLMEvalKit's `exact_matching` policy, no judge model), run once over all groups.
- mmmu_pro.json -- MMMU-Benchmark/MMMU @ bb0b95a945998d91dfef37e969e07d49d1139438, mmmu-pro/evaluate.py:
  get_multi_choice_info, parse_multi_choice_response, mmmu_process_results; `random` is a stand-in whose `choice`
  returns "RANDOM". case {response, options, answer, parsed, if_right (null where parsed is "RANDOM")}.
"""
import argparse
import ast
import copy as cp
import datetime
import json
import os
import random
import re
import string
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

COMMAND = "python scripts/crosscheck/scorers.py --mirrors /work/.mirror --out tests/fixtures/crosscheck/scorers"
SEED = 0
MIN_CASES = 500
MAX_BYTES = 1_500_000

MMF = ("facebookresearch/mmf", "b0ffc7fba39f210f833c127362146aec01a2f259")
LMMS = ("EvolvingLMMs-Lab/lmms-eval", "75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3")
PIX2STRUCT = ("google-research/pix2struct", "945f27e936c9464d9d7c133f1bd1f4f383be9e99")
VLMEVAL = ("open-compass/VLMEvalKit", "e8e78f05f3080fe28154f2130321f17951c3be94")
VLMEVAL_OLD = ("open-compass/VLMEvalKit", "aca64dbb")  # resolved to 40 hex with git rev-parse
MMMU = ("MMMU-Benchmark/MMMU", "bb0b95a945998d91dfef37e969e07d49d1139438")


# ----------------------------------------------------------------------------------------------------------- loading
class Mirrors:
    def __init__(self, root):
        self.root = Path(root)

    def git_dir(self, repo):
        d = self.root / repo.replace("/", "+") / "repo"
        return d / ".git" if (d / ".git").is_dir() else d

    def git(self, repo, *args):
        return subprocess.run(["git", "--git-dir", str(self.git_dir(repo)), *args], check=True, capture_output=True,
                              text=True).stdout

    def resolve(self, repo, rev):
        return self.git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").strip()

    def blob(self, repo, commit, path):
        return self.git(repo, "rev-parse", f"{commit}:{path}").strip()

    def show(self, repo, commit, path):
        return self.git(repo, "show", f"{commit}:{path}")


def _node_name(node):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def load_official(mirrors, repo, commit, path, names, namespace, drop_decorators=()):
    """Execute the top-level definitions `names` of `path` at `commit` in `namespace` (in source order) and return it.
    A decorated definition is refused unless named in `drop_decorators`; its decorator is then left out."""
    src = mirrors.show(repo, commit, path)
    tree = ast.parse(src)
    found = {}
    for node in tree.body:
        name = _node_name(node)
        if name not in names:
            continue
        if name in found:
            raise ValueError(f"{path}@{commit}: {name} defined twice")
        if getattr(node, "decorator_list", None) and name not in drop_decorators:
            raise ValueError(f"{path}@{commit}: {name} is decorated")
        segment = ast.get_source_segment(src, node)
        assert not segment.lstrip().startswith("@"), segment[:80]
        found[name] = segment
    missing = [n for n in names if n not in found]
    if missing:
        raise ValueError(f"{path}@{commit}: not found: {missing}")
    for name, segment in found.items():
        exec(compile(segment, f"<{repo}@{commit[:12]}:{path}:{name}>", "exec"), namespace)
    return namespace


class QuietLogger:
    """Stands in for the loggers of the official modules; counts what they would have said."""

    def __init__(self):
        self.calls = []

    def _log(self, level):
        return lambda msg, *a, **k: self.calls.append((level, str(msg)))

    def __getattr__(self, level):
        if level in ("debug", "info", "warning", "warn", "error", "critical", "exception"):
            return self._log(level)
        raise AttributeError(level)


def base_namespace(**extra):
    ns = {"__name__": "official", "__builtins__": __builtins__, "re": re, "string": string, "os": os, "cp": cp,
          "np": np, "pd": pd, "logger": QuietLogger(), "Any": Any, "Callable": Callable, "Dict": Dict, "List": List,
          "Mapping": Mapping, "Optional": Optional, "Sequence": Sequence, "Tuple": Tuple, "Union": Union}
    ns.update(extra)
    return ns


def fake_module(name, **attrs):
    m = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(m, k, v)
    return m


def _refuse(what):
    def f(*a, **k):
        raise AssertionError(f"{what} was not expected to be called")
    return f


# ----------------------------------------------------------------------------------------------------------- output
def serialize(cases, provenance):
    lines = [json.dumps(c, sort_keys=True, ensure_ascii=True) for c in cases]
    return ('{"cases": [\n' + ",\n".join(lines) + '\n],\n"provenance": ' +
            json.dumps(provenance, sort_keys=True, ensure_ascii=True, indent=1) + "}\n")


def write_fixture(out, name, provenance, cases):
    path = out / f"{name}.json"
    provenance = dict(provenance, command=COMMAND, seed=SEED, generated=datetime.date.today().isoformat())
    if path.exists():  # keep the date when nothing else changed, so reruns are byte-identical
        try:
            old = json.loads(path.read_text())
            if serialize(old["cases"], dict(old["provenance"], generated=None)) == serialize(
                    cases, dict(provenance, generated=None)):
                provenance["generated"] = old["provenance"]["generated"]
        except (ValueError, KeyError, TypeError):
            pass
    text = serialize(cases, provenance)
    assert len(text.encode()) < MAX_BYTES, (name, len(text))
    assert len(cases) >= MIN_CASES or name == "mmbench_circular", (name, len(cases))
    path.write_text(text)
    back = json.loads(path.read_text())
    assert back["cases"] == json.loads(json.dumps(cases)), name
    return path, len(text.encode())


def provenance_of(mirrors, repo, commit, path, functions, notes, also=None):
    p = {"repository": repo, "commit": commit, "path": path, "functions": list(functions),
         "notes": notes + f" (blob {mirrors.blob(repo, commit, path)})"}
    if also:
        p["also"] = also
    return p


def unique(cases, key):
    seen, out = set(), []
    for c in cases:
        k = key(c)
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out


def fill(hand, make_random, rng, key, target):
    """hand cases first, then seeded random ones until `target` distinct inputs (HAND[0] is set to the number of
    distinct hand cases)."""
    cases = unique(hand, key)
    HAND[0] = len(cases)
    seen = {key(c) for c in cases}
    tries = 0
    while len(cases) < target:
        c = make_random(rng)
        tries += 1
        assert tries < 100 * target
        if key(c) not in seen:
            seen.add(key(c))
            cases.append(c)
    return cases


HAND = [0]


def hand_note():
    return f" The first {HAND[0]} cases are hand-picked, the rest seeded random compositions of the same pieces."


def counts(values):
    d = {}
    for v in values:
        d[v] = d.get(v, 0) + 1
    return dict(sorted(d.items(), key=lambda kv: str(kv[0])))


# ----------------------------------------------------------------------------------------------------------- TextVQA
TV_WORDS = ["red", "blue", "stop", "coca cola", "sign", "yes", "no", "nike", "pepsi", "street", "smith", "john",
            "new york", "london", "bus", "12", "2010", "cat", "dog", "table", "left", "right", "open", "exit", "bank",
            "one way", "coffee", "st", "dr", "inc", "jr"]
TV_SPECIAL = ["'s", "1,000", "10,000,000", "a,b", "1,2", "?", "mr.", "mr. smith", "3.5", "end.", "e.g.", "u.s.a.",
              "st. louis", "5.", ".5", "p.m.", "no.", "10.30", "3,5", "hello?", "why?!", "o'clock", "rock 'n' roll",
              "it's", "smith's", "...", "1.000,50", "$5.99", "50%", "#1"]
TV_PUNCT = [";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",", "?", "!",
            ":", "'", "*", "#", "&", "%", "$", "~", "|", "."]
TV_NUMWORDS = ["zero", "none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
               "twenty", "Two", "NONE", "One"]
TV_ARTICLES = ["a", "an", "the", "A", "An", "The", "THE"]
TV_CONTRACTIONS = ["dont", "isnt", "cant", "wont", "arent", "doesnt", "thats", "whats", "youre", "theyre", "Im", "Ive",
                   "im", "ive", "Id've", "yall", "hes", "she's", "somebody'd", "let's", "oclock", "maam", "twas", "its",
                   "shouldnt've", "howd", "y'allll"]
TV_OTHERS = ["blue", "stop", "nike", "pepsi", "coca cola", "2", "3", "1000", "ab", "mr smith", "smith's", "yes", "no",
             "london", "new york", "exit", "the bank", "unanswerable", "unsure", "red sign", "12", "two", "don't",
             "end", "3.5", "35", "a", "the", ""]


def tv_piece(rng):
    kind = rng.random()
    if kind < 0.30:
        return rng.choice(TV_WORDS)
    if kind < 0.50:
        return rng.choice(TV_SPECIAL)
    if kind < 0.62:
        return rng.choice(TV_PUNCT)
    if kind < 0.75:
        return rng.choice(TV_NUMWORDS)
    if kind < 0.87:
        return rng.choice(TV_ARTICLES)
    return rng.choice(TV_CONTRACTIONS)


def tv_case(rng, s):
    r = rng.random()
    return s.upper() if r < 0.12 else s.title() if r < 0.22 else s.capitalize() if r < 0.3 else s


def tv_compose(rng):
    parts = [tv_piece(rng) for _ in range(rng.choice([1, 1, 1, 2, 2, 2, 3, 4]))]
    out = parts[0]
    for p in parts[1:]:
        out += rng.choice([" ", " ", " ", " ", "  ", "\t", "\n", ""]) + p
    out = tv_case(rng, out)
    if rng.random() < 0.2:
        out = rng.choice([" ", "  ", "\t", "\n"]) + out
    if rng.random() < 0.2:
        out = out + rng.choice([" ", "  ", "\t", "\n", " \n"])
    return out


TV_DIGITS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "10": "ten"}


def tv_variant(rng, s):
    """a surface variant of s that the processor may (or may not) map to the same answer"""
    r = rng.random()
    if r < 0.25:
        return s
    if r < 0.35:
        return s.upper()
    if r < 0.45:
        return " " + s + " "
    if r < 0.55:
        return rng.choice(["the ", "a ", "an ", "The "]) + s
    if r < 0.65:
        return s + rng.choice([".", "?", "!", ",", " ?"])
    if r < 0.72:
        return s.replace(" ", "  ")
    if r < 0.80:
        w = s.split()
        return " ".join(TV_DIGITS.get(x, x) for x in w)
    if r < 0.87:
        return s.replace("'", "")
    if r < 0.93:
        return s.replace(",", "")
    return s.lower().title()


def tv_answers(rng, pred, k):
    answers = [tv_variant(rng, pred) for _ in range(k)]
    while len(answers) < 10:
        answers.append(rng.choice(TV_OTHERS) if rng.random() < 0.6 else tv_compose(rng))
    rng.shuffle(answers)
    return answers


TV_HAND_PREDS = ["a,b", "mr. smith 's", "mr. smith's", "1,000", "10,000,000", "1,2", "3,5", "3.5", "5.", ".5", "end.",
                 "e.g.", "u.s.a.", "st. louis", "p.m.", "no.", "10.30", "...", "hello?", "why?!", "?", "two", "Two",
                 "none", "NONE", "zero", "ten", "eleven", "a", "the", "The Bank", "an apple", "a dog", "dont", "isnt",
                 "Im", "im", "Ive", "Id've", "somebody'd", "let's", "yall", "y'allll", "its", "it's", "smith's",
                 "smith 's", "STOP", "Stop Sign", "coca\tcola", "coca\ncola", "  nike  ", "\tpepsi\n", "new  york",
                 "red;blue", "red; blue", "red ;blue", "a-b", "a - b", "a/b", "(a)", "[b]", "{c}", "x=y", "1+1",
                 "back\\slash", "snake_case", "e-mail", "<html>", "@home", "`tick`", "wow!", "yes!", "no?", "50%",
                 "$5.99", "#1", "o'clock", "oclock", "rock 'n' roll", "1.000,50", "it is 5,000 and a-b",
                 "the 1,000 - 2", "12 - 3, 4", "\"quoted\"", "don't", "DONT", "wont", "won't", "whats up",
                 "." * 40, "a." * 40, "1.2.3", "v.2", ""]


def textvqa_fixture(mirrors, rng):
    repo, commit = MMF
    path = "mmf/utils/m4c_evaluators.py"
    names = ["EvalAIAnswerProcessor", "TextVQAAccuracyEvaluator"]
    ns = load_official(mirrors, repo, commit, path, names, base_namespace())
    Processor, Evaluator = ns["EvalAIAnswerProcessor"], ns["TextVQAAccuracyEvaluator"]

    def case(pred, answers):
        assert len(answers) == 10
        score = Evaluator().eval_pred_list([{"pred_answer": pred, "gt_answers": list(answers)}])
        return {"prediction": pred, "answers": list(answers), "score": score, "processed_prediction": Processor()(pred)}

    hand = [case("a,b", ["ab"] * 10),
            case("mr. smith 's", ["mr. smith's", "mr smith", "smith", "mr. smith", "john smith", "smith's", "mr",
                                  "mister smith", "mrs. smith", "unanswerable"])]
    for pred in TV_HAND_PREDS:
        # the same hand prediction against answer lists with 0..10 surface variants of it
        for k in rng.sample([1, 2, 3, 10], 2):
            hand.append(case(pred, tv_answers(rng, pred, k)))
    hand += [case("1000", ["1,000"] * 3 + ["one thousand"] * 7), case("ab", ["a,b"] * 4 + ["a b"] * 6),
             case("a b", ["a,b"] * 4 + ["a-b"] * 6), case("2", ["two"] * 2 + ["Two"] + ["2."] + ["3"] * 6),
             case("don't", ["dont"] * 3 + ["do not"] * 7), case("im", ["Im"] * 5 + ["I'm"] * 5),
             case("I'm", ["Im"] * 5 + ["im"] * 5), case("", [""] * 10), case(" ", ["", "", "a", "the"] + ["x"] * 6),
             case("the", ["a"] * 2 + ["an"] + ["the"] * 7)]

    def rand(rng):
        pred = tv_compose(rng)
        k = rng.choice([0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 7, 10])
        return case(pred, tv_answers(rng, pred, k))

    cases = fill(hand, rand, rng, lambda c: (c["prediction"], tuple(c["answers"])), 600)
    notes = ("score = TextVQAAccuracyEvaluator().eval_pred_list([{'pred_answer': prediction, 'gt_answers': answers}]) "
             "(the mean over one entry, i.e. that entry's soft score); processed_prediction = "
             "EvalAIAnswerProcessor()(prediction); the classes are executed as they are at the commit (fresh instances "
             "per case). Quirks of the official processor: word_tokenize drops every ',' and '?' first, so COMMA_STRIP "
             "never fires and '1,000' -> '1000', 'a,b' -> 'ab'; PERIOD_STRIP.sub('', text, re.UNICODE) passes "
             "re.UNICODE (32) as count, so at most 32 periods are removed; '(?!<=\\d)' is a look-ahead, not the "
             "intended look-behind; the text is lower-cased before the CONTRACTIONS look-up, so the keys 'Im', 'Ive', "
             "\"Id've\" never match; CONTRACTIONS maps \"somebody'd\" -> 'somebodyd'; NUMBER_MAP.setdefault adds "
             "every word seen to the class-level NUMBER_MAP (no effect on the output). Scores are k-of-10 soft scores: "
             "k=1 -> 0.3, 2 -> 0.6, 3 -> 0.9 (as floats, e.g. 0.30000000000000004), >=4 -> 1.")
    prov = provenance_of(mirrors, repo, commit, path, names, notes + hand_note())
    scores = counts(round(c["score"], 6) for c in cases)
    return "textvqa", prov, cases, f"scores {scores}"


# ----------------------------------------------------------------------------------------------------------- ANLS
ANLS_BASES = ["1976", "1975", "$1,000", "1000", "12/03/1998", "March 3, 1998", "Straße", "straße", "ﬁle", "ﬁnance",
              "İstanbul", "ǅemal", "ŉ", "Köln", "naïve café", "ÆON", "John Smith", "R. J. Reynolds",
              "Tobacco Institute",
              "N/A", "yes", "no", "0.5 mg", "P.O. Box 123", "Dear Sir", "new york", "RJR", "(212) 555-0199", "5%",
              "Philip Morris U.S.A.", "a", "", " "]
ANLS_WORDS = ["the", "report", "annual", "total", "tobacco", "research", "council", "meeting", "Board", "of",
              "Directors",
              "budget", "1986", "page", "7", "Mr.", "Dr.", "institute", "department", "sales", "ﬁscal", "Straße"]


def anls_mutate(rng, s):
    s = list(s)
    for _ in range(rng.choice([0, 0, 1, 1, 1, 2, 2, 3, 4, 6, 10])):
        op = rng.random()
        pos = rng.randrange(len(s) + 1)
        ch = rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 ßﬁ.-,")
        if op < 0.35 or not s:
            s.insert(pos, ch)
        elif op < 0.7:
            del s[min(pos, len(s) - 1)]
        else:
            s[min(pos, len(s) - 1)] = ch
    s = "".join(s)
    r = rng.random()
    if r < 0.15:
        s = s.upper()
    elif r < 0.3:
        s = s.lower()
    elif r < 0.38:
        s = s.title()
    if rng.random() < 0.15:
        s = rng.choice([" ", "  ", "\t"]) + s
    if rng.random() < 0.15:
        s = s + rng.choice([" ", "  ", "\n"])
    if rng.random() < 0.1:
        s = s.replace(" ", "  ")
    return s


def anls_base(rng):
    if rng.random() < 0.15:
        return " ".join(rng.choice(ANLS_WORDS) for _ in range(rng.randint(8, 40)))
    return rng.choice(ANLS_BASES)


def docvqa_fixture(mirrors, rng):
    repo, commit = LMMS
    path = "lmms_eval/api/metrics.py"
    names = ["levenshtein_distance", "anls"]
    ns = load_official(mirrors, repo, commit, path, names, base_namespace(), drop_decorators=("anls",))
    anls = ns["anls"]

    def case(pred, answers):
        return {"prediction": pred, "answers": list(answers), "score": anls(list(answers), [pred])["anls"]}

    long_a = "The Tobacco Institute annual report of the Board of Directors for the fiscal year 1986"
    hand = [case("19", ["1976"]), case(" 1975 ", ["1976"]), case("1975", ["1976"]), case("Str", ["Straße"]),
            case("STRASSE", ["Straße"]), case("strasse", ["straße"]), case("Straße", ["STRASSE"]),
            case("Straße", ["Straße"]), case("ﬁle", ["file"]), case("FILE", ["ﬁle"]), case("ﬁ", ["fi"]),
            case("ﬁ", ["f"]), case("İ", ["i"]), case("i", ["İ"]), case("ŉ", ["n"]), case("ǅ", ["dž"]),
            case("", [""]), case("", ["abc"]), case("abc", [""]), case(" ", [""]), case("", [" "]),
            case("", ["", "a"]), case("  ", ["a"]), case("Case", ["case"]), case("CASE STUDY", ["case study"]),
            case("new  york", ["new york"]), case("new york", ["new   york"]), case(" new york ", ["New York"]),
            case("new\tyork", ["new york"]), case("new\nyork", ["New  York"]), case("abcd", ["abef"]),
            case("abcd", ["abcf"]), case("ab", ["abc"]), case("a", ["ab"]), case("abc", ["xyz"]),
            case("abc", ["xyz", "abd", "abc "]), case("1976", ["1975", "1976"]), case("1976", ["1", "19", "197"]),
            case("$1,000", ["1000"]), case("1,000", ["1000"]), case("12/03/1998", ["12-03-1998"]),
            case(long_a, [long_a]), case(long_a.upper(), [long_a]), case(long_a[:-4], [long_a]),
            case(long_a[: len(long_a) // 2], [long_a]), case(long_a.replace(" ", "  "), [long_a]),
            case(long_a + " " * 40, [long_a]), case("x" * 300, ["x" * 150]), case("x" * 300, ["x" * 151]),
            case("ß" * 10, ["ss" * 10]), case("ß" * 10, ["s" * 10]), case("ﬁ" * 6, ["fi" * 6])]
    for base in ANLS_BASES:
        for _ in range(4):
            hand.append(case(anls_mutate(rng, base), [base]))

    def rand(rng):
        base = anls_base(rng)
        answers = [base] + [anls_mutate(rng, base) if rng.random() < 0.6 else anls_base(rng)
                            for _ in range(rng.choice([0, 0, 1, 2]))]
        rng.shuffle(answers)
        src = rng.choice(answers) if rng.random() < 0.85 else anls_base(rng)
        return case(anls_mutate(rng, src), answers)

    cases = fill(hand, rand, rng, lambda c: (c["prediction"], tuple(c["answers"])), 600)
    notes = ("score = anls(answers, [prediction])['anls'] (levenshtein_distance and anls executed as at the commit, "
             "without anls's @register_metric decorator). Quirks: the edit distance is taken between the normalised "
             "strings (strip, lower, whitespace runs -> one space) but divided by max(len(answer.upper()), "
             "len(prediction.upper())) of the RAW strings, so surrounding/inner spaces and characters whose upper() is "
             "longer (ß -> SS, ﬁ -> FI) enlarge the denominator (' 1975 ' vs '1976' -> 1 - 1/6; 'Str' vs 'Straße' -> "
             "1 - 3/7); two empty strings give 1.0; a result below 0.5 is the int 0, otherwise a float.")
    prov = provenance_of(mirrors, repo, commit, path, names, notes + hand_note())
    bins = counts("0" if c["score"] == 0 else "1" if c["score"] == 1 else "(0.5,1)" if c["score"] > 0.5
                  else "0.5" if c["score"] == 0.5 else "?" for c in cases)
    return "docvqa_anls", prov, cases, f"scores {bins}"


# ----------------------------------------------------------------------------------------------------------- ChartQA
CQ_WORDS = ["Yes", "No", "Asia", "Europe", "2019-2020", "Q1", "Male", "Female", "Democrats", "Apple", "iPhone",
            "United States", "N/A", "None", "True", "Infinity", "NaN", "nan", "inf", "-inf", "e", "1/2", "1,000",
            "12 million", "$12", "12%%", "%", "", " "]


def cq_number(rng):
    r = rng.random()
    if r < 0.25:
        return str(rng.randint(0, 100))
    if r < 0.4:
        return str(rng.randint(100, 100000))
    if r < 0.55:
        return f"{rng.uniform(0, 100):.{rng.choice([1, 2])}f}"
    if r < 0.65:
        return f"{rng.uniform(0, 1):.{rng.choice([2, 3])}f}"
    if r < 0.75:
        return str(-rng.randint(1, 500))
    if r < 0.85:
        return f"{rng.randint(0, 100)}%"
    if r < 0.92:
        return f"{rng.uniform(0, 100):.1f}%"
    return rng.choice(["0", "0.0", "-0", "0%", "1e3", "1_000", "2.5e-2", "100", "20", "95"])


def cq_number_text(rng, x):
    r = rng.random()
    if r < 0.3:
        s = repr(x) if x != int(x) else str(int(x))
    elif r < 0.5:
        s = f"{x:.2f}"
    elif r < 0.6:
        s = f"{x:.1f}"
    elif r < 0.7:
        s = f"{x * 100:.1f}%"
    elif r < 0.78:
        s = f"{x:.3e}"
    elif r < 0.85:
        s = f"{x:,.0f}"
    else:
        s = f"{x:g}"
    r = rng.random()
    if r < 0.08:
        s = " " + s
    elif r < 0.16:
        s = s + " "
    elif r < 0.2:
        s = s + "%%"
    elif r < 0.24:
        s = s + "."
    return s


def cq_value(t):
    try:
        return float(t.rstrip("%")) / 100 if t.endswith("%") else float(t)
    except ValueError:
        return None


def cq_random(rng):
    if rng.random() < 0.2:
        target = rng.choice(CQ_WORDS)
        r = rng.random()
        pred = target.lower() if r < 0.3 else target.upper() if r < 0.5 else rng.choice(CQ_WORDS) if r < 0.8 \
            else " " + target
        return pred, target
    target = cq_number(rng)
    v = cq_value(target)
    if v is None:
        v = 1.0
    factor = rng.choice([1, 1, 1.01, 0.99, 1.04, 0.96, 1.05, 0.95, 1.0499, 1.0501, 1.06, 0.94, 1.1, 0.9, 1.5, -1, 100,
                         0.01])
    pred = cq_number_text(rng, v * factor)
    if rng.random() < 0.1:
        pred = target
    return pred, target


CQ_HAND = [("40%%", "0.4"), ("40%", "0.4"), ("0.4", "40%"), ("0.4", "40%%"), ("40", "40%"), ("40 %", "0.4"),
           ("40% ", "0.4"), (" 40%", "0.4"), (" 12", "12"), ("12 ", "12"), ("12 ", "12.5"), ("12", "12.5"),
           ("11.9", "12.5"), ("13.2", "12.5"), ("13.125", "12.5"), ("11.875", "12.5"), ("13.13", "12.5"),
           ("0", "0"), ("0.0", "0"), ("0", "0.0"), ("-0", "0"), ("0", "-0"), ("0.001", "0"), ("0%", "0"),
           ("0", "0%"), ("nan", "nan"), ("NaN", "nan"), ("nan", "12"), ("12", "nan"), ("inf", "inf"),
           ("inf", "12"), ("12", "inf"), ("-inf", "inf"), ("Infinity", "inf"), ("1_000", "1000"), ("1000", "1_000"),
           ("1,000", "1000"), ("1e3", "1000"), ("1000", "1e3"), ("1E3", "1e3"), ("-12", "-12"), ("-12", "12"),
           ("12", "-12"), ("-12.4", "-12"), ("-11.4", "-12"), ("−12", "-12"), ("Yes", "yes"), ("YES", "Yes"),
           ("yes", "Yes "), ("Asia", "asia"), ("Straße", "STRASSE"), ("straße", "Straße"), ("50%", "50%"),
           ("0.5", "50%"), ("0.52", "50%"), ("0.53", "50%"), ("52%", "50%"), ("52.5%", "50%"), ("53%", "50%"),
           ("50", "50%"), ("50%", "0.5"), ("50%", "50"), ("%", "%"), ("", ""), ("", "0"), (" ", " "), ("12%%", "12%%"),
           ("١٢", "12"), ("12", "١٢"), ("１２", "12"), ("1/2", "0.5"), ("0.5", "1/2"), ("True", "1"), ("1", "True"),
           ("105", "100"), ("95", "100"), ("105.0001", "100"), ("94.9999", "100"), ("21", "20"), ("19", "20"),
           ("2.1", "2"), ("$12", "12"), ("12 million", "12"), ("12.", "12"), (".5", "0.5"), ("+12", "12"),
           ("0x10", "16"), ("1e-3", "0.001"), ("1e400", "1e400"), ("1e-400", "0"), ("12.0", "12"), ("12", "12.0")]


def chartqa_fixture(mirrors, rng):
    repo, commit = LMMS
    path = "lmms_eval/tasks/chartqa/utils.py"
    p_repo, p_commit = PIX2STRUCT
    p_path = "pix2struct/metrics.py"
    lm = load_official(mirrors, repo, commit, path, ["relaxed_correctness"], base_namespace())["relaxed_correctness"]
    px = load_official(mirrors, p_repo, p_commit, p_path, ["relaxed_correctness"],
                       base_namespace())["relaxed_correctness"]

    def case(pred, target):
        a, b = lm(pred, target), px(target, pred)
        assert isinstance(a, bool) and isinstance(b, bool)
        return {"prediction": pred, "target": target, "correct": a, "correct_pix2struct": b}

    hand = [case(p, t) for p, t in CQ_HAND]
    for t in ["12", "0.4", "40%", "100", "-3", "0", "1e3", "Yes", "12.5", "0.05", "1986", "33.3%"]:
        v = cq_value(t) or 1.0
        for f in (1.05, 0.95, 1.051, 0.949, 1.049):
            hand.append(case(repr(v * f), t))
    cases = fill(hand, lambda r: case(*cq_random(r)), rng, lambda c: (c["prediction"], c["target"]), 600)
    differ = sum(c["correct"] != c["correct_pix2struct"] for c in cases)
    notes = ("correct = lmms-eval relaxed_correctness(prediction, target) (lmms_eval/tasks/chartqa/utils.py); "
             f"correct_pix2struct = pix2struct relaxed_correctness(target, prediction) ({p_repo} @ {p_commit}, "
             f"{p_path}, blob {mirrors.blob(p_repo, p_commit, p_path)}; note its argument order). Both with "
             f"max_relative_change=0.05. Cases where the two differ: {differ}. Quirks (both): text.rstrip('%') drops "
             "every trailing '%' ('40%%' -> 0.4); float() accepts surrounding spaces, '1_000', '1e3', 'nan', 'inf' and "
             "non-ASCII digits ('١٢'); a target whose value is 0 (or -0) is falsy, so it is compared as text; a nan or "
             "inf target never matches a number (nan <= 0.05 is False), not even itself; non-numbers are compared "
             "with .lower() (no strip).")
    also = [{"repository": p_repo, "commit": p_commit, "path": p_path, "functions": ["relaxed_correctness"],
             "field": "correct_pix2struct"}]
    prov = provenance_of(mirrors, repo, commit, path, ["relaxed_correctness"], notes + hand_note(), also)
    summary = f"correct {counts(c['correct'] for c in cases)}; lmms-eval vs pix2struct differ: {differ}"
    return "chartqa", prov, cases, summary, differ


# ----------------------------------------------------------------------------------------------------------- MMBench
MB_SHORT = ["red", "blue", "green", "yes", "no", "A", "B", "C", "Z", "plan A", "plan B", "cat", "dog", "2", "3", "left",
            "right", "The dog", "a cat", "None of the above", "apple", "Apple Inc.", "42", "D", "up", "down", "the sky",
            "I", "an ox", "B and C", "(A)", "A."]
MB_LONG = ["The man is holding an umbrella in the rain", "A woman riding a bicycle on the street",
           "There are three apples on the wooden table", "The sign says stop", "It is a sunny day at the beach",
           "The cat is sleeping under the red chair", "Two children are playing football in the park",
           "The image shows a map of Europe with capitals marked", "A bar chart comparing sales across four regions",
           "The object on the left is larger than the one on the right",
           "This painting belongs to the impressionist movement of the nineteenth century",
           "The person in the photo appears to be happy and relaxed"]
MB_REJECTS = ["Sorry, I can't help with images of people yet.", "I can't process this file.",
              "I'm sorry, but without the image provided, I cannot answer.", "Cannot determine the answer",
              "I cannot determine the answer", "Sorry, I can't help with images of people yet. The answer is A."]
MB_FILLER = ["Looking at the image carefully, ", "Based on the picture, ", "Hmm. ", "After careful consideration, ",
             "In this image we can see several objects and people doing various things; overall "]
MB_TAIL = [" I hope this helps.", " This is because the colours match what we see in the scene.", ".", "!",
           " Let me know if you need anything else.", "\n"]
# {L}: a letter of the options, {l}: it lower-cased, {M}: another letter, {T}/{U}: the texts of {L}/{M}
MB_TEMPLATES = ["{L}", "{l}", "{L}.", "({L})", "{L})", "[{L}]", "**{L}**", "{L}: {T}", "{L}. {T}", "({L}) {T}",
                "The answer is {L}.", "The answer is ({L}).", "the correct answer is **{l}**", "answer is {l}",
                "The correct answer is **{L}**. Here's why: the {T} is visible on the left.",
                "The correct answer is {L}. A man is standing next to it, so it cannot be {M}.", "Answer: {L}",
                "Answer:{L}", "Option {L}", "I choose {L}", "My answer: {L}!", "#{L}#", "{{{L}}}", "{L};", "{L},",
                "{L} is correct because the picture clearly shows the object on the left side of the table near the "
                "window",
                "Based on the image, {L} is the best choice since the colour matches what we see in the scene here",
                "A man is standing next to the car, so the answer is {L}", "A man is standing next to the car",
                "A", "I think it's {L} or {M}", "{L} and {M}", "Answer is {L},{M}", "The answer is\n**{L}**",
                "The answer is {L}{M}", "{T}", "'{T}'", "\"{T}\"", "The image shows {T}.", "It is {T}",
                "It is either {T} or {U}.", "{T} and {U}", "Not {U}, it is {T}", "{T}{T}{T}{T}{T}",
                "{T} " * 4 + "and so on and so forth, this is clearly a very long answer",
                "Z", "z", "None of these, Z.", "The answer is Z.", "E", "The answer is E.", "", " ", "42",
                "Failed to obtain answer via API", "Failed to obtain answer via API. {L}", "{L}\n\nExplanation: {T}",
                "Option {L} ({T}) is the answer", "The correct answer is: {L}", "CORRECT ANSWER IS {L}",
                "correct answer is *{L}*", "Answer is ({L})"]


def mb_options(rng, n=None):
    n = n or rng.choice([2, 3, 4, 4, 4])
    pool = MB_SHORT if rng.random() < 0.55 else MB_LONG if rng.random() < 0.5 else MB_SHORT + MB_LONG
    texts = rng.sample(pool, n) if len(pool) >= n else [rng.choice(pool) for _ in range(n)]
    return {"ABCD"[i]: t for i, t in enumerate(texts)}


def mb_answer(rng, options, letter=None, template=None):
    letters = list(options)
    L = letter or (rng.choice(letters) if rng.random() < 0.9 else rng.choice("ABCDE"))
    M = rng.choice([x for x in "ABCD" if x != L])
    T, U = options.get(L, rng.choice(MB_SHORT)), options.get(M, rng.choice(MB_LONG))
    r = rng.random()
    if template is None and r < 0.06:
        return rng.choice(MB_REJECTS)
    t = template or rng.choice(MB_TEMPLATES)
    a = t.format(L=L, l=L.lower(), M=M, T=T, U=U)
    if template is None:
        if rng.random() < 0.2:
            a = rng.choice(MB_FILLER) + a
        if rng.random() < 0.2:
            a = a + rng.choice(MB_TAIL)
    return a


def mb_hand(rng):
    o4 = {"A": "red", "B": "blue", "C": "green", "D": "yellow"}
    o3 = {"A": "cat", "B": "dog", "C": "horse"}
    o2 = {"A": "yes", "B": "no"}
    olong = {"A": MB_LONG[0], "B": MB_LONG[1], "C": MB_LONG[2], "D": MB_LONG[3]}
    plan = {"A": "plan B", "B": "plan A"}
    hand = [("Plan A is better", plan), ("plan A is better", plan), ("Plan A", plan), ("plan B", plan),
            ("A", plan), ("B", plan), ("I prefer plan B", plan), ("Plan B is better than plan A", plan),
            ("A", o4), ("a", o4), ("A.", o4), ("(B)", o4), ("B)", o4), ("The answer is A.", o4),
            ("the correct answer is **c**", o4), ("The correct answer is **C**", o4), ("answer is d", o4),
            ("The answer is D.", o3), ("The answer is D", o2), ("The answer is E.", o4), ("E", o4),
            ("The answer is A B.", o4), ("The answer is AB.", o4), ("Z", o4), ("z", o4), ("Z.", o4), ("(Z)", o4),
            ("The answer is Z", o4), ("Failed to obtain answer via API", o4),
            ("Failed to obtain answer via API. The answer is A.", o4), ("", o4), (" ", o4), ("red", o4),
            ("RED", o4), ("'red'", o4), ("It is red or blue", o4), ("reddish", o4), ("greenblue", o4),
            ("A man holds a red umbrella", o4), ("A red car", o4), ("A man is standing near the car", o4),
            ("A man", o4), ("A man is here", o4), ("A man is standing here", o4), ("The answer is A", o4),
            ("B is correct because the image shows a red car parked near the tree", o4),
            ("B is correct because it is", o4), ("B is the one", o4), ("B is the right one", o4),
            ("The car is blue, so the answer is B", o4), ("Looking at it, the correct answer is B because it is blue "
                                                          "and nothing else in the image matches", o4),
            ("C. green", o4), ("C: green", o4), ("(C) green", o4), ("C green", o4), ("green (C)", o4),
            ("**C**", o4), ("[C]", o4), ("{C}", o4), ("#C#", o4), ("C;", o4), ("C!", o4), ("C/D", o4), ("C-D", o4),
            ("C and D", o4), ("C, D", o4), ("Answer: C", o4), ("Answer:C", o4), ("Option C", o4),
            ("The answer is\n**C**", o4), ("CORRECT ANSWER IS C", o4), ("correct answer is *c*", o4),
            ("The correct answer is **B**. Here's why: A is wrong and C is wrong", o4),
            ("The correct answer is **B**. Here's why: it is blue and the others are not", o4),
            ("The answer is B. Here's why: it is blue and the others are not shown", o4),
            ("answer is B but A is close and so is C", o4), ("the answer is   b", o4), ("The answer is (B).", o4),
            ("The answer is **(B)**", o4), ("The answer is 'B'", o4), ("The answer is: B", o4),
            (MB_LONG[0], olong), (MB_LONG[0].lower(), olong), ("'" + MB_LONG[2] + "'", olong),
            ("Both '" + MB_LONG[0] + "' and '" + MB_LONG[1] + "' fit", olong), (MB_LONG[3] + ".", olong),
            ("The sign says stop, which is option D", olong), ("D", olong), ("d", olong), ("Option D", olong),
            ("The answer is " + MB_LONG[3], olong), ("yes", o2), ("no", o2), ("Yes, it is.", o2), ("No.", o2),
            ("yes and no", o2), ("I don't know", o2), ("nope", o2), ("Yes " * 3, o2), ("Yes", o2),
            ("cat", o3), ("a dog", o3), ("horses", o3), ("The dog chases the cat", o3), ("a horse, not a dog", o3),
            ("cat " * 20, o3), ("dog dog dog dog dog dog dog dog dog dog dog dog dog dog dog", o3),
            ("catdoghorse", o3), ("C", {"A": "C", "B": "D"}), ("D", {"A": "C", "B": "D"}),
            ("C", {"A": "B", "B": "C", "C": "A"}), ("A", {"A": "B", "B": "A"}), ("B", {"A": "B", "B": "A"}),
            ("I", {"A": "I", "B": "you"}), ("I think so", {"A": "I", "B": "you"}), ("you", {"A": "I", "B": "you"}),
            ("42", {"A": "42", "B": "24"}), ("4", {"A": "42", "B": "24"}), ("2", {"A": "42", "B": "24"}),
            ("The answer is 42", {"A": "42", "B": "24"}), ("(A)", {"A": "(A)", "B": "(B)"}),
            ("A.", {"A": "A.", "B": "B."})]
    for r in MB_REJECTS:
        hand.append((r, o4))
        hand.append((r + " " + "B", o2))
    for t in MB_TEMPLATES:  # every template once against each hand option set
        for opts in (o4, o3, o2, olong):
            hand.append((mb_answer(rng, opts, letter=rng.choice(list(opts)), template=t), opts))
    # letters at every position of a long sentence (the current rule: the letter among the last four words)
    words = "the picture shows a small house near the river and a tall tree behind it".split()
    for i in range(len(words) + 1):
        for L in "BC":
            hand.append((" ".join(words[:i] + [L] + words[i:]), o4))
    return hand


def mb_random(rng):
    opts = mb_options(rng)
    return mb_answer(rng, opts), opts


def mmbench_fixtures(mirrors, rng):
    repo, new = VLMEVAL
    old = mirrors.resolve(repo, VLMEVAL_OLD[1])
    path = "vlmeval/utils/matching_util.py"
    os.environ.pop("VERBOSE", None)
    assert "VERBOSE" not in os.environ
    new_names = ["_VERBOSE_ANSWER_RE", "can_infer_option", "can_infer_text", "can_infer"]
    old_names = ["can_infer_option", "can_infer_text", "can_infer"]
    new_ns = load_official(mirrors, repo, new, path, new_names, base_namespace())
    old_ns = load_official(mirrors, repo, old, path, old_names, base_namespace(get_logger=lambda *a: QuietLogger()))

    inputs = [(a, dict(o)) for a, o in mb_hand(rng)]
    keyed = unique(inputs, lambda x: (x[0], tuple(x[1].items())))
    HAND[0] = len(keyed)
    seen = {(a, tuple(o.items())) for a, o in keyed}
    while len(keyed) < 1200:
        a, o = mb_random(rng)
        if (a, tuple(o.items())) not in seen:
            seen.add((a, tuple(o.items())))
            keyed.append((a, o))

    def run(ns):
        out = []
        for a, o in keyed:
            fresh = dict(o)  # can_infer_text lower-cases the dict it is given
            c = ns["can_infer"](a, fresh)
            assert c is False or (isinstance(c, str) and c in list(o) + ["Z"]), (a, o, c)
            out.append({"answer": a, "options": dict(o), "choice": c})
        return out

    new_cases, old_cases = run(new_ns), run(old_ns)
    changed = sum(x["choice"] != y["choice"] for x, y in zip(new_cases, old_cases))
    common = ("choice = can_infer(answer, dict(options)) as executed at the commit, with VERBOSE unset; false where "
              "it returns False, 'Z' where it decides the model refused. A fresh copy of options per call "
              "(can_infer_text lower-cases the dict it gets). Same inputs, same order as the other mmbench_vlmevalkit "
              f"file; {changed} of {len(keyed)} choices differ between the two commits. ")
    new_notes = common + ("Current rule: a single letter among the options counts only if its first occurrence is "
                          "among the last four words (splits.index(ch) > len(splits) - 5); otherwise "
                          "_VERBOSE_ANSWER_RE ('(?:correct\\s+)?answer\\s+is\\s+\\**([ABCD])\\**', case-insensitive) "
                          "is tried, then can_infer_text, which now gives up (False) when the lower-cased answer is "
                          "longer than twice the options' total length. Quirks: the letter test is case-sensitive "
                          "(only 'answer is b' via the regex catches lower case); the article 'A' counts as a letter; "
                          "'Z' (or a reject phrase) gives 'Z'; option texts are matched as substrings ('reddish' -> "
                          "red).")
    old_notes = common + (f"Older matcher (aca64dbb = {old}, 2025-04): a single letter among the options counts "
                          "wherever it stands; no answer-is regex; can_infer_text has no length limit.")
    new_prov = provenance_of(mirrors, repo, new, path, new_names, new_notes + hand_note())
    old_prov = provenance_of(mirrors, repo, old, path, old_names, old_notes + hand_note())
    s_new = f"choices {counts(c['choice'] for c in new_cases)}"
    s_old = f"choices {counts(c['choice'] for c in old_cases)}; differ from current: {changed}"
    return [("mmbench_vlmevalkit", new_prov, new_cases, s_new), ("mmbench_vlmevalkit_2025_04", old_prov, old_cases,
                                                                  s_old)], new_ns


class MemoryStore:
    """VLMEvalKit's `load`/`dump` (file I/O) replaced by an in-memory store: mcq_circular_eval dumps its results and a
    copy of the main rows and loads them back; nothing is written to disk."""

    def __init__(self):
        self.files = {}

    def dump(self, data, f, **kwargs):
        self.files[f] = data.copy() if isinstance(data, pd.DataFrame) else cp.deepcopy(data)

    def load(self, f, fmt=None):
        data = self.files[f]
        return data.copy() if isinstance(data, pd.DataFrame) else cp.deepcopy(data)


CIRC_SETS = [["red", "blue", "green", "yellow"], ["cat", "dog", "horse"], ["yes", "no"], MB_LONG[:4],
             ["plan B", "plan A"], ["B", "A"], ["C", "D", "A"], ["I", "you", "A man", "the car"]]
# per rotation: (template, whose letter): "gt" the rotation's gt letter, "wrong" another one, None a fixed answer
CIRC_SPECS = [lambda r, n: ("{L}", "gt"), lambda r, n: ("The answer is {L}.", "gt"),
              lambda r, n: ("the correct answer is **{l}**", "gt"), lambda r, n: ("{T}", "gt"),
              lambda r, n: ("({L}) {T}", "gt"), lambda r, n: ("Z" if r == n - 1 else "{L}", "gt"),
              lambda r, n: ("" if r == 1 else "{L}.", "gt"),
              lambda r, n: ("Failed to obtain answer via API" if r == 0 else "**{L}**", "gt"),
              lambda r, n: ("{L} is correct because the picture clearly shows the object on the left side of the "
                            "table near the window", "gt"),
              lambda r, n: ("A man is standing next to the car, so the answer is {L}", "gt"),
              lambda r, n: ("{L}", "wrong" if r == n - 1 else "gt"),
              lambda r, n: ("Cannot determine the answer" if r == 0 else "Answer: {L}", "gt")]


def circular_hand_groups(rng):
    groups = []
    for texts in CIRC_SETS:
        n = len(texts)
        for s, spec in enumerate(CIRC_SPECS):
            gt = s % n
            rotations = []
            for r in range(n):
                options = {"ABCD"[i]: texts[(i + r) % n] for i in range(n)}
                gl = "ABCD"[(gt - r) % n]
                template, who = spec(r, n)
                letter = gl if who == "gt" else rng.choice([x for x in options if x != gl])
                rotations.append({"answer": mb_answer(rng, options, letter=letter, template=template),
                                  "options": options, "gt": gl})
            groups.append(rotations)
    return groups


def circular_groups(rng, n_groups):
    groups = circular_hand_groups(rng)
    HAND[0] = len(groups)
    while len(groups) < n_groups:
        n = rng.choice([2, 3, 4, 4, 4])
        base = mb_options(rng, n)
        texts = list(base.values())
        gt = rng.randrange(n)
        behaviour = rng.choice(["right", "right", "right", "right-text", "mixed", "one-wrong", "one-miss", "random"])
        miss_at, wrong_at = rng.randrange(n), rng.randrange(n)
        rotations = []
        for r in range(n):
            options = {"ABCD"[i]: texts[(i + r) % n] for i in range(n)}  # texts shifted one place per rotation
            gl = "ABCD"[(gt - r) % n]  # the gt letter moves with its text
            assert options[gl] == texts[gt]
            wrong = rng.choice([x for x in options if x != gl])
            if behaviour == "right" or (behaviour in ("one-wrong", "one-miss") and r not in (miss_at, wrong_at)):
                a = mb_answer(rng, options, letter=gl, template=rng.choice(MB_TEMPLATES[:31]))
            elif behaviour == "right-text":
                a = mb_answer(rng, options, letter=gl, template=rng.choice(["{T}", "'{T}'", "The image shows {T}.",
                                                                            "It is {T}", "{L}. {T}"]))
            elif behaviour == "one-wrong" and r == wrong_at:
                a = mb_answer(rng, options, letter=wrong, template=rng.choice(MB_TEMPLATES[:31]))
            elif behaviour == "one-miss" and r == miss_at:
                a = rng.choice(["", "I am not sure.", "Failed to obtain answer via API", "It is either {T} or {U}."
                                .format(T=options[gl], U=options[wrong]), "E", "Z"] + MB_REJECTS)
            elif behaviour == "mixed":
                a = mb_answer(rng, options, letter=gl if rng.random() < 0.7 else wrong)
            else:
                a = mb_answer(rng, options)
            rotations.append({"answer": a, "options": options, "gt": gl})
        groups.append(rotations)
    return groups


def circular_fixture(mirrors, rng, matcher_ns):
    repo, commit = VLMEVAL
    path = "vlmeval/dataset/utils/multiple_choice.py"
    names = ["build_choices", "prefetch_answer", "prefetch_circular_group", "mcq_circular_eval"]
    store = MemoryStore()
    ns = base_namespace(osp=os.path, rd=fake_module("random", choice=_refuse("random.choice")), can_infer=matcher_ns[
        "can_infer"], can_infer_lego=_refuse("can_infer_lego"), track_progress_rich=_refuse("track_progress_rich"),
                        load=store.load, dump=store.dump, datetime=datetime)
    load_official(mirrors, repo, commit, "vlmeval/smp/misc.py", ["istype", "timestr"], ns)
    load_official(mirrors, repo, commit, "vlmeval/smp/file.py", ["get_pred_file_format"], ns)
    load_official(mirrors, repo, commit, path, names, ns)
    os.environ.pop("PRED_FORMAT", None)

    groups = circular_groups(rng, 360)
    rows, meta = [], []
    for g, rotations in enumerate(groups, start=1):
        for r, rot in enumerate(rotations):
            idx = r * 1_000_000 + g  # VLMEvalKit's circular indices: g_index = index % 1e6
            rows.append({"index": idx, "question": f"q{g}", **rot["options"], "prediction": rot["answer"]})
            meta.append({"index": idx, "answer": rot["gt"]})
    data = pd.DataFrame(rows, columns=["index", "question", "A", "B", "C", "D", "prediction"])
    meta = pd.DataFrame(meta)
    result_file = "memory://mmbench_circular_result.pkl"  # no such file: mcq_circular_eval starts from no results
    out = ns["mcq_circular_eval"](None, data, meta, 1, result_file)
    hits = {int(i): int(h) for i, h in zip(out["index"], out["hit"])}
    assert len(hits) == len(groups)

    cases, agree = [], 0
    for g, rotations in enumerate(groups, start=1):
        sub = data[data["index"] % 1_000_000 == g].copy()
        sub["GT"] = [r["gt"] for r in rotations]
        pf = ns["prefetch_circular_group"](sub, verbose=False)
        direct = pf["hit"] if isinstance(pf, dict) else 0  # the `model is None` branch: None -> hit 0
        agree += direct == hits[g]
        for i, rot in enumerate(rotations):
            rot["prefetched"] = ns["prefetch_answer"](sub.iloc[i])
        cases.append({"rotations": rotations, "hit": hits[g]})
    assert agree == len(groups), (agree, len(groups))
    notes = ("hit = mcq_circular_eval(None, data, meta, 1, result_file)['hit'] per group, i.e. VLMEvalKit's "
             "exact_matching policy (no judge model), run once over all groups with MMBench's circular indices "
             "(rotation r of group g has index r*1e6+g); build_choices, prefetch_answer, prefetch_circular_group, "
             "mcq_circular_eval executed as at the commit with the current matcher (can_infer, VERBOSE unset) and "
             "VLMEvalKit's own istype/timestr/get_pred_file_format; its load/dump (file I/O) are an in-memory store, "
             "track_progress_rich and rd.choice are never reached (they raise if called). 'prefetched' is "
             "prefetch_answer(row) per rotation (the letter, 'Z' or false). The options of rotation r are the group's "
             "texts shifted r places (option i holds text (i+r) mod n) and gt moves with its text. A group hits when "
             "every rotation prefetches its gt; one prefetched wrong letter (or 'Z') -> 0; a rotation nothing was "
             "prefetched from -> 0 under exact_matching. Checked: prefetch_circular_group per group (dict -> its hit, "
             f"None -> 0) agrees with mcq_circular_eval for all {len(groups)} groups.")
    also = [{"repository": repo, "commit": commit, "path": "vlmeval/utils/matching_util.py",
             "functions": ["_VERBOSE_ANSWER_RE", "can_infer_option", "can_infer_text", "can_infer"]},
            {"repository": repo, "commit": commit, "path": "vlmeval/smp/misc.py", "functions": ["istype", "timestr"]},
            {"repository": repo, "commit": commit, "path": "vlmeval/smp/file.py",
             "functions": ["get_pred_file_format"]}]
    prov = provenance_of(mirrors, repo, commit, path, names, notes + hand_note().replace("cases", "groups"), also)
    summary = (f"hits {counts(c['hit'] for c in cases)}; rotations per group "
               f"{counts(len(c['rotations']) for c in cases)}; prefetch_circular_group agrees on {agree}/{len(groups)}")
    return "mmbench_circular", prov, cases, summary


# ----------------------------------------------------------------------------------------------------------- MMMU-Pro
MM_TEXTS = ["12", "3.5 m/s", "Mitochondria", "Nucleus", "Ribosome", "Golgi apparatus", "Photosynthesis",
            "The demand curve shifts to the right", "The supply curve shifts to the left", "Both curves stay put",
            "Impressionism", "Cubism", "Baroque", "$1,200", "$1,500", "0.25", "1/4", "None of the above",
            "All of the above", "I", "II and III", "A", "B", "x = 2", "x = -2", "increase", "decrease", "no change",
            "Renaissance architecture with Gothic elements", "Option A", "(C)", "D.", "It depends on the temperature"]
MM_TEMPLATES = ["{L}", "{l}", "({L})", "{L}.", "{L}!", "{L}?", "'{L}'", "**{L}**", "{L}: {T}", "({L}) {T}",
                "Answer: {L}", "Answer: ({L})", "Answer:{L}", "Answer: {l}", "The answer is {L}.",
                "I think it is {L}.", "I think the answer is ({L}).", "Answer: {L}\nAnswer: {M}",
                "Answer: {M}. Wait, let me reconsider. Answer: {L}", "Answer: {L} or {M}",
                "({L}) seems plausible but ({M}) is better", "({L}) ... ({M})", "{L} or {M}", "{L}. {M}.",
                "Between {L} and {M}, I pick {M}", "After analysing the figure carefully, the correct option is {T}",
                "After analysing the figure carefully, I believe the correct option is {T}.",
                "The figure clearly indicates {T} and not {U} here", "{T}", "The answer is {T}!",
                "Answer: none of these", "Answer: I think {L}", "Answer: {T}", "", " ", "None", "...", "I don't know.",
                "The final choice is {L}.", "So the answer must be {L}...", "{L}.\n\nExplanation: {T}",
                "Answer: The correct option is {L}", "Let's see: {T}? No. {U}? Yes. So Answer: {M}"]


def mm_random(rng, letter_template=None):
    n = rng.choice([4, 4, 5, 6, 8, 10, 10, 10])
    options = rng.sample(MM_TEXTS, n)
    letters = [chr(ord("A") + i) for i in range(n)]
    answer = rng.choice(letters)
    L = answer if rng.random() < 0.6 else rng.choice(letters)
    M = rng.choice([x for x in letters if x != L])
    T, U = options[ord(L) - 65], options[ord(M) - 65]
    t = letter_template or rng.choice(MM_TEMPLATES)
    response = t.format(L=L, l=L.lower(), M=M, T=T, U=U)
    if letter_template is None and rng.random() < 0.15:
        response = rng.choice(["Let me think step by step. ", "Looking at the image, "]) + response
    return response, options, answer


def mmmu_fixture(mirrors, rng):
    repo, commit = MMMU
    path = "mmmu-pro/evaluate.py"
    names = ["get_multi_choice_info", "parse_multi_choice_response", "mmmu_process_results"]
    fake_random = fake_module("random", choice=lambda seq: "RANDOM")
    ns = load_official(mirrors, repo, commit, path, names, base_namespace(random=fake_random, ast=ast))
    info, parse, process = ns["get_multi_choice_info"], ns["parse_multi_choice_response"], ns["mmmu_process_results"]
    mismatches = []

    def case(response, options, answer):
        index2ans, all_choices = info(list(options))
        parsed = parse(response, all_choices, index2ans)
        if_right = None if parsed == "RANDOM" else parsed == answer
        res = process({"response": response, "options": str(list(options)), "answer": answer, "id": "x"})
        if res["pred_indexs"] != parsed or res["if_right"] != (parsed == answer):
            mismatches.append((response, options, answer, parsed, res["pred_indexs"], res["if_right"]))
        return {"response": response, "options": list(options), "answer": answer, "parsed": parsed,
                "if_right": if_right}

    ten = ["Mitochondria", "Nucleus", "Ribosome", "Golgi apparatus", "Lysosome", "Vacuole", "Chloroplast",
           "Cell wall", "Cytoplasm", "Centrosome"]
    four = ["The demand curve shifts to the right", "The supply curve shifts to the left", "Both curves stay put",
            "Prices fall"]
    hand = [case("I think it is D.", ten, "D"), case("I think it is D.", four, "D"), case("I think it is I.", ten, "I"),
            case("I think", ten, "I"), case("I", ten, "I"), case("I.", ten, "A"), case("i think it is d", ten, "D"),
            case("d", four, "D"), case("b", four, "B"), case("(b)", four, "B"), case("Answer: b", four, "B"),
            case("Answer: B", four, "B"), case("Answer: B Answer: C", four, "C"),
            case("Answer: A\nAnswer: B\nAnswer: C", four, "C"), case("Answer: C. Answer: the first one", four, "C"),
            case("Answer: C\nAnswer:", four, "C"), case("Answer:", four, "A"), case("Answer: AB", four, "A"),
            case("Answer: I think B", ten, "B"), case("Answer: I think B", four, "B"),
            case("Answer: The correct option is B", four, "B"), case("Answer: The correct option is B", ten, "B"),
            case("(B) ... (C)", four, "B"), case("(B) is wrong, (C) is right", four, "C"),
            case("(C) is right, (B) is wrong", four, "C"), case("(B) (C) (B)", four, "B"), case("B C", four, "B"),
            case("C B", four, "B"), case("B. C.", four, "B"), case("B.C.", four, "B"), case("B", four, "B"),
            case("B.", four, "B"), case("B!", four, "B"), case("B?", four, "B"), case("B;", four, "B"),
            case("B:", four, "B"), case("'B'", four, "B"), case("B'.", four, "B"), case(".B.", four, "B"),
            case("**B**", four, "B"), case("\"B\"", four, "B"), case("[B]", four, "B"), case("B)", four, "B"),
            case("", four, "A"), case(" ", four, "A"), case("", ten, "A"), case("None", four, "A"),
            case("...", four, "A"), case("E", four, "A"), case("(E)", four, "A"),
            case("The supply curve shifts to the left", four, "B"),
            case("Clearly, in this figure, the supply curve shifts to the left", four, "B"),
            case("Clearly, in this figure, the supply curve shifts to the left.", four, "B"),
            case("In this figure the demand curve shifts to the right, or the supply curve shifts to the left", four,
                 "B"), case("I believe it is the mitochondria of the cell", ten, "A"),
            case("I believe it is the mitochondria of the cell", four, "A"),
            case("the organelle shown is the nucleus", ten, "B"), case("the organelle shown is the nucleus ok", ten,
                                                                       "B"),
            case("the organelle shown here is the cell wall not the vacuole", ten, "H"),
            case("Mitochondria", ten, "A"), case("mitochondria and ribosome", ten, "A"),
            case("It is D. Not E.", ten, "D"), case("It is (D). Not (E).", ten, "D"), case("A or B", four, "A"),
            case("Between A and B, I pick B", four, "B"), case("ABCD", four, "A"), case("A,B", four, "A"),
            case("The final choice is J.", ten, "J"), case("J", ten, "J"), case("The answer is J", ten, "J"),
            case("The answer is (J).", ten, "J")]
    for t in MM_TEMPLATES:
        for _ in range(3):
            hand.append(case(*mm_random(rng, letter_template=t)))
    cases = fill(hand, lambda r: case(*mm_random(r)), rng,
                 lambda c: (c["response"], tuple(c["options"]), c["answer"]), 650)
    assert not mismatches, mismatches[:5]
    notes = ("parsed = parse_multi_choice_response(response, all_choices, index2ans) with index2ans, all_choices = "
             "get_multi_choice_info(options); 'RANDOM' where the official code calls random.choice(all_choices) "
             "(nothing parsed; the stand-in random's choice returns 'RANDOM'); if_right = parsed == answer, null where "
             "parsed is 'RANDOM'. Checked: mmmu_process_results({'response', 'options': str(options), 'answer', 'id'}) "
             "gives the same pred_indexs and if_right == (parsed == answer) for every case. Quirks: after the last "
             "'Answer:' a letter counts when it is the only option letter occurring anywhere as a substring (so words "
             "such as 'I' or 'The'/'Answer' letters of options A-J interfere); letters are case-sensitive; only "
             "leading/trailing , . ! ? ; : ' are stripped (one pass per character, in that order); bare letters need "
             "a following space or '.'; several candidates -> the one whose ' X ' / '(X)' / option text occurs last "
             "(np.argmax, first on ties); option texts are tried only when the response has more than 5 words.")
    prov = provenance_of(mirrors, repo, commit, path, names, notes + hand_note())
    summary = (f"parsed RANDOM {sum(c['parsed'] == 'RANDOM' for c in cases)}, if_right "
               f"{counts(c['if_right'] for c in cases)}; mmmu_process_results agrees: {not mismatches}")
    return "mmmu_pro", prov, cases, summary


# ----------------------------------------------------------------------------------------------------------- main
def show_named(out):
    """print the named hand cases from the written files"""
    load = lambda n: json.loads((out / f"{n}.json").read_text())["cases"]
    tv = load("textvqa")
    for c in tv:
        if (c["prediction"] == "a,b" and c["answers"] == ["ab"] * 10) or (
                c["prediction"] == "mr. smith 's" and "mr. smith's" in c["answers"] and len(set(c["answers"])) == 10):
            print(f"  textvqa {c['prediction']!r} vs {c['answers']!r}: score {c['score']!r}, processed "
                  f"{c['processed_prediction']!r}")
    for c in load("docvqa_anls"):
        if (c["prediction"], c["answers"]) in [("19", ["1976"]), (" 1975 ", ["1976"]), ("Str", ["Straße"]),
                                               ("", [""]), ("ﬁle", ["file"]), ("new  york", ["new york"])]:
            print(f"  docvqa {c['prediction']!r} vs {c['answers']!r}: anls {c['score']!r}")
    for c in load("chartqa"):
        if (c["prediction"], c["target"]) in [("40%%", "0.4"), ("40%", "0.4"), (" 12", "12"), ("12 ", "12.5"),
                                              ("0", "0"), ("0.0", "0"), ("nan", "nan"), ("inf", "inf"),
                                              ("1_000", "1000"), ("1e3", "1000"), ("-12", "12"), ("Yes", "yes")]:
            print(f"  chartqa {c['prediction']!r} vs {c['target']!r}: lmms-eval {c['correct']}, "
                  f"pix2struct {c['correct_pix2struct']}")
    new, old = load("mmbench_vlmevalkit"), load("mmbench_vlmevalkit_2025_04")
    named = [("Plan A is better", {"A": "plan B", "B": "plan A"}), ("A", {"A": "red", "B": "blue", "C": "green",
                                                                          "D": "yellow"}),
             ("The answer is A.", None), ("the correct answer is **c**", None), ("(B)", None),
             ("B is correct because the image shows a red car parked near the tree", None),
             ("A man is standing near the car", None), ("Z", None), ("Failed to obtain answer via API", None),
             ("Cannot determine the answer", None)]
    for a, o in named:
        for x, y in zip(new, old):
            if x["answer"] == a and (o is None or x["options"] == o):
                print(f"  mmbench {a!r} {x['options']}: current {x['choice']!r}, 2025-04 {y['choice']!r}")
                break
    shown = set()
    for c in load("mmmu_pro"):
        k = (c["response"], len(c["options"]))
        if c["response"] in ("I think it is D.", "Answer: B Answer: C", "(B) ... (C)", "", "Answer: I think B",
                             "Answer: The correct option is B") and k not in shown:
            shown.add(k)
            print(f"  mmmu_pro {c['response']!r} ({len(c['options'])} options): parsed {c['parsed']!r}, "
                  f"if_right {c['if_right']}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", required=True, help="folder of <owner>+<name>/repo bare git mirrors")
    ap.add_argument("--out", required=True, help="output folder for the JSON fixtures")
    args = ap.parse_args(argv)
    mirrors, out = Mirrors(args.mirrors), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    results = [textvqa_fixture(mirrors, random.Random(SEED)), docvqa_fixture(mirrors, random.Random(SEED))]
    name, prov, cases, summary, differ = chartqa_fixture(mirrors, random.Random(SEED))
    results.append((name, prov, cases, summary))
    mb, matcher = mmbench_fixtures(mirrors, random.Random(SEED))
    results += mb
    results.append(circular_fixture(mirrors, random.Random(SEED), matcher))
    results.append(mmmu_fixture(mirrors, random.Random(SEED)))

    for name, prov, cases, summary in results:
        path, size = write_fixture(out, name, prov, cases)
        print(f"{path}: {len(cases)} cases, {size / 1e6:.2f} MB; {summary}")
    print(f"ChartQA: lmms-eval and pix2struct relaxed_correctness differ on {differ} cases")
    print("named hand cases (read back from the files):")
    show_named(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
