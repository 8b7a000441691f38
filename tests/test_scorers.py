"""Every benchmark's score as its official evaluation code gives it.

`tests/fixtures/crosscheck/scorers/` holds what the official functions returned on several hundred inputs each (hand-picked
tricky cases and seeded random compositions of the same pieces): MMF's TextVQA evaluator, lmms-eval's ANLS and ChartQA relaxed
accuracy (and pix2struct's), VLMEvalKit's `can_infer` at two commits and its CircularEval under `exact_matching`, and
MMMU-Pro's `parse_multi_choice_response`. Each file's `provenance` names the repository, commit, path, functions and the command
(`python scripts/crosscheck/scorers.py --mirrors DIR --out tests/fixtures/crosscheck/scorers`), which runs the original code
itself from a clone of each repository; nothing of that code is in the project. Here the package's scorers must return the same
value on every case.
"""
import json
from pathlib import Path
import pandas as pd
import pytest
from vqa_robust.vqav2 import VQADataset
from vqa_robust.metrics import (OPTION_RULES, accuracy_anls, accuracy_relaxed, evalai_answer, mmmu_pro_option, score_answers, vqa_accuracy,
                                vlmevalkit_2025_04_option, vlmevalkit_option)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "crosscheck" / "scorers"

def cases(name: str) -> list[dict]:
    fixture = json.loads((FIXTURES / f"{name}.json").read_text())
    assert fixture["provenance"]["commit"], name
    assert fixture["provenance"]["repository"], name
    assert len(fixture["cases"]) >= 500 or name == "mmbench_circular", (name, len(fixture["cases"]))
    return fixture["cases"]

def mismatches(rows, got, want) -> list:
    "The cases whose package value differs from the official one (the first ten, for the message)."
    return [(r, g, w) for r, g, w in zip(rows, got, want) if g != w][:10]

def test_textvqa_equals_mmf():
    rows = cases("textvqa")
    assert not mismatches(rows, [evalai_answer(r["prediction"]) for r in rows], [r["processed_prediction"] for r in rows])
    assert not mismatches(rows, [vqa_accuracy(r["prediction"], r["answers"], "textvqa") for r in rows], [r["score"] for r in rows])
    assert {round(r["score"], 1) for r in rows} == {0.0, 0.3, 0.6, 0.9, 1.0}  # every soft score occurs

def test_docvqa_anls_equals_rrc_script():
    rows = cases("docvqa_anls")
    assert not mismatches(rows, [accuracy_anls(r["prediction"], r["answers"]) for r in rows], [r["score"] for r in rows])
    assert any(r["score"] == 0.5 for r in rows)  # the threshold itself is kept

def test_chartqa_relaxed_equals_pix2struct():
    rows = cases("chartqa")
    assert all(r["correct"] == r["correct_pix2struct"] for r in rows)  # lmms-eval's copy and pix2struct's agree
    assert not mismatches(rows, [accuracy_relaxed(r["prediction"], [r["target"]]) for r in rows], [float(r["correct"]) for r in rows])

@pytest.mark.parametrize("name, read", [("mmbench_vlmevalkit", vlmevalkit_option), ("mmbench_vlmevalkit_2025_04", vlmevalkit_2025_04_option)])
def test_mmbench_option_equals_vlmevalkit(name, read):
    rows = cases(name)
    official = [r["choice"] or None for r in rows]  # can_infer's False: nothing read
    assert not mismatches(rows, [read(r["answer"], dict(r["options"]))[0] for r in rows], official)
    assert OPTION_RULES[name.removeprefix("mmbench_")].read is read

def test_mmbench_circular_eval_equals_vlmevalkit():
    "Each group of rotations as questions of a dataset, scored and folded by the package; its score is VLMEvalKit's hit."
    groups, questions, answers = cases("mmbench_circular"), [], []
    for g, group in enumerate(groups):
        for r, rotation in enumerate(group["rotations"]):
            qid = g + r * 1_000_000
            questions.append({"question_id": qid, "image_id": g, "question": "?", "question_type": "mc", "answer_type": "multiple choice",
                              "multiple_choice_answer": rotation["gt"], "answers": [rotation["gt"]], "options": rotation["options"], "circular_of": g})
            answers.append({"question_id": qid, "answer": rotation["answer"]})
    dataset = VQADataset(pd.DataFrame(questions), Path("."), "{image_id}.png", "groups")
    folded = score_answers(pd.DataFrame(answers), dataset, mode="exact", option_rules="vlmevalkit").set_index("question_id")
    assert not mismatches(groups, [folded.score[g] for g in range(len(groups))], [float(group["hit"]) for group in groups])
    assert 0 < sum(group["hit"] for group in groups) < len(groups)

def test_mmmu_pro_option_equals_official_parser():
    rows = cases("mmmu_pro")
    letters = "ABCDEFGHIJ"
    got = [mmmu_pro_option(r["response"], dict(zip(letters, r["options"])))[0] for r in rows]
    assert not mismatches(rows, got, [None if r["parsed"] == "RANDOM" else r["parsed"] for r in rows])
    assert any(r["parsed"] == "RANDOM" for r in rows)
