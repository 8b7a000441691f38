"""The blind baseline's priors on a VQAv2-sized training split: `most_common_by` (one groupby) against one `most_common_answer` call per question string.

    python scripts/bench_blind.py [--questions 443757] [--distinct 150000]

The split is synthetic (VQAv2's training split has 443,757 questions, about 150,000 distinct strings, 65 question types); both paths give
the same answers, checked here, and the script prints each one's seconds and their ratio."""
import argparse, time
import numpy as np, pandas as pd
from vqa_robust.analysis import most_common_by
from vqa_robust.vocabulary import most_common_answer

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--questions", type=int, default=443_757); ap.add_argument("--distinct", type=int, default=150_000)
args = ap.parse_args()
rng = np.random.default_rng(0)
questions = pd.Series([f"question {k}?" for k in rng.integers(0, args.distinct, args.questions)], dtype="str")
answers = pd.Series(rng.choice([f"answer {k}" for k in range(3000)], args.questions, p=np.r_[0.5, np.full(2999, 0.5 / 2999)]), dtype="str")
start = time.perf_counter(); per_string = answers.groupby(questions).agg(most_common_answer); old = time.perf_counter() - start
start = time.perf_counter(); at_once = most_common_by(questions, answers); new = time.perf_counter() - start
assert per_string.to_dict() == at_once.to_dict(), "the two paths disagree"
print(f"{args.questions:,} questions, {questions.nunique():,} distinct: one most_common_answer a string {old:.2f} s, "
      f"most_common_by {new:.2f} s ({old / new:.1f} times as fast), the same answers")
