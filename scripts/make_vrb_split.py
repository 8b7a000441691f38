"""Write the shipped list of VRB's 3,000 VQAv2 val2014 images, once, from the official questions file.

The rule (see nbs/00_vqav2.ipynb, "VRB's split"): sort the distinct image ids of v2_OpenEnded_mscoco_val2014_questions.json and draw
3,000 of them with numpy.random.RandomState(0).choice(ids, 3000, replace=False). The record goes to
vqa_robust/splits/vqav2_val2014_vrb3000.json (package data); commit it, and every user evaluates the same questions.

    python scripts/make_vrb_split.py --data-dir DIR      # DIR: where VQAv2 was unzipped (flat, or Questions/ as the VQA API has it)
"""
import argparse, sys
from pathlib import Path
from vqa_robust.vqav2 import VRB_IMAGES, VRB_SEED, VRB_SPLIT, make_split, shipped_split, splits_folder, vqav2_files

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", required=True, help="folder holding VQAv2's questions file (as unzipped, or under Questions/)")
    ap.add_argument("--subtype", default="val2014", help="COCO split of the questions file (default val2014)")
    ap.add_argument("--n-images", type=int, default=VRB_IMAGES, help=f"images to draw (default {VRB_IMAGES}, as VRB)")
    ap.add_argument("--seed", type=int, default=VRB_SEED, help=f"seed of numpy's RandomState (default {VRB_SEED})")
    ap.add_argument("--name", default=VRB_SPLIT, help=f"the split's name, its file's stem (default {VRB_SPLIT})")
    ap.add_argument("--out-dir", default=None, help="where to write (default: the package's splits folder, vqa_robust/splits/)")
    args = ap.parse_args()
    try:
        (questions_file,) = vqav2_files(args.data_dir, args.subtype, parts=("questions",))
        path = make_split(questions_file, args.name, args.n_images, args.seed, args.out_dir)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr); sys.exit(1)
    record = shipped_split(args.name, args.out_dir or splits_folder())
    print(f"wrote {path}: {record['n_images']} images, {record['n_questions']} questions of {questions_file.name} "
          f"(sha256 {record['questions_file_sha256'][:16]}...)")
