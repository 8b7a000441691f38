#!/usr/bin/env bash
# Make a side virtual environment holding VLMEvalKit (open-compass/VLMEvalKit, not on PyPI) at a pinned commit, for running the
# real VLMEvalKit on the package's exports (tests/fixtures/vlmevalkit/README.md says how, and what it writes). Idempotent: about
# 2 minutes and 2.1 GB the first time (torch's CPU wheel from local disk, the rest from PyPI), ~10 s to confirm an up-to-date env
# (it imports run.py). pip's "vlmeval 0.1.0 requires ..., which is not installed" lines are expected (requirements left out).
#
#   scripts/vlmevalkit_env.sh [SRC]         SRC, or VLMEVALKIT_SRC: VLMEvalKit's source, any one of
#       - a bare git directory or a clone holding the pinned commit (the commit is checked out with `git archive`);
#       - a source tarball (.tar, .tar.gz, .tgz, .zip) of that commit, such as
#         https://codeload.github.com/open-compass/VLMEvalKit/tar.gz/<commit> (checked with `git get-tar-commit-id` when it can);
#       - an unpacked source folder (holding setup.py and vlmeval/; its commit cannot be checked: it is trusted).
#     Obtaining it: `git clone https://github.com/open-compass/VLMEvalKit G && git -C G checkout <commit>` where GitHub is
#     reachable; on the offline machines, an agent's `fetch` tool (github:open-compass/VLMEvalKit) brings a bare git dir to
#     /work/.mirror/open-compass+VLMEvalKit/repo. SRC is needed only the first time: an up-to-date env is left alone without it.
#   VLMEVALKIT_COMMIT=SHA   the commit (default e8e78f05f3080fe28154f2130321f17951c3be94, 2026-08-18)
#   VLMEVALKIT_ENV=DIR      where (default ~/.cache/vqa_robust/vlmevalkit-<first 8 hex of the commit>): DIR/venv is the virtual
#                           environment, DIR/VLMEvalKit the source (installed `pip install --no-deps -e`; run DIR/VLMEvalKit/run.py
#                           with DIR/venv/bin/python)
#   PYTHON=python3          the interpreter the venv is made from (tried on 3.11)
#
# Not VLMEvalKit's requirements.txt (70 packages, gradio, litellm, lpips, clip...): only the packages the import chain of run.py
# asks for, with torch pinned to the CPU build 2.13.0 and torchvision to its match 0.28.0. One repair: torchvision 0.28.0 from
# PyPI is a CUDA build whose compiled ops do not register here ("operator torchvision::nms does not exist"), and VLMEvalKit imports
# it; its two unguarded `register_fake` calls are guarded so its pure-Python parts import.
set -euo pipefail
VLMEVALKIT_COMMIT=${VLMEVALKIT_COMMIT:-e8e78f05f3080fe28154f2130321f17951c3be94}
VLMEVALKIT_ENV=${VLMEVALKIT_ENV:-$HOME/.cache/vqa_robust/vlmevalkit-${VLMEVALKIT_COMMIT:0:8}}
SRC=${1:-${VLMEVALKIT_SRC:-}}
PYTHON=${PYTHON:-python3}
# What run.py's import chain needs (the list in /work/shared/FIELD_NOTES.md, 2026-12-06; `import run` succeeds with it), versions
# left to pip except where pinned (resolved 2026-12-06: pandas 3.1.1, numpy 2.4.6, pillow 13.0.0, transformers 5.25.0, openpyxl 3.1.5).
PACKAGES=(torch==2.13.0 torchvision==0.28.0 pandas numpy pillow requests tabulate termcolor tqdm rich huggingface_hub sty
  python-dotenv openpyxl xlsxwriter portalocker validators timeout-decorator json_repair openai datasets levenshtein joblib decord
  jieba nltk rouge math_verify pylatexenc==2.10 antlr4-python3-runtime==4.11.1 opencv-python-headless rouge_score imageio scipy
  num2words scikit-learn transformers accelerate qwen_vl_utils)
venv="$VLMEVALKIT_ENV/venv"; tree="$VLMEVALKIT_ENV/VLMEvalKit"; stamp="$VLMEVALKIT_ENV/.vqa_robust_vlmevalkit"
want="$VLMEVALKIT_COMMIT ${PACKAGES[*]}"
check() { (cd "$tree" && "$venv/bin/python" -c "import run" >/dev/null 2>&1); }   # run.py's whole import chain, main() not run
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && check; then
  echo "vlmevalkit_env: $VLMEVALKIT_ENV is up to date (VLMEvalKit $VLMEVALKIT_COMMIT)"; exit 0
fi
mkdir -p "$VLMEVALKIT_ENV"
# 1. The source, at the pinned commit, in $tree (kept when it already holds that commit).
if [ "$(cat "$tree/.vqa_robust_commit" 2>/dev/null)" != "$VLMEVALKIT_COMMIT" ]; then
  if [ -z "$SRC" ]; then
    cat >&2 <<EOF
vlmevalkit_env: VLMEvalKit's source is needed: scripts/vlmevalkit_env.sh SRC (or VLMEVALKIT_SRC=SRC), SRC being a bare git dir or
clone holding $VLMEVALKIT_COMMIT, or a tarball of it, or an unpacked source folder. Get one with
  git clone https://github.com/open-compass/VLMEvalKit G && git -C G checkout $VLMEVALKIT_COMMIT
or download https://codeload.github.com/open-compass/VLMEvalKit/tar.gz/$VLMEVALKIT_COMMIT
(offline: an agent's fetch tool, github:open-compass/VLMEvalKit, gives /work/.mirror/open-compass+VLMEvalKit/repo).
EOF
    exit 2
  fi
  tmp=$(mktemp -d "$VLMEVALKIT_ENV/.src.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
  if [ -d "$SRC" ] && gitdir=$(git -C "$SRC" rev-parse --absolute-git-dir 2>/dev/null); then
    git --git-dir="$gitdir" rev-parse -q --verify "$VLMEVALKIT_COMMIT^{commit}" >/dev/null \
      || { echo "vlmevalkit_env: $SRC does not hold commit $VLMEVALKIT_COMMIT" >&2; exit 2; }
    git --git-dir="$gitdir" archive "$VLMEVALKIT_COMMIT" | tar -x -C "$tmp"
  elif [ -d "$SRC" ]; then
    echo "vlmevalkit_env: $SRC is a plain folder: its commit cannot be checked, taken as $VLMEVALKIT_COMMIT" >&2
    cp -a "$SRC/." "$tmp/"
  elif [ -f "$SRC" ]; then
    case "$SRC" in
      *.zip) "$PYTHON" -m zipfile -e "$SRC" "$tmp" ;;
      *) got=$( (gzip -dcf "$SRC" | git get-tar-commit-id) 2>/dev/null || true)
         if [ -n "$got" ] && [ "$got" != "$VLMEVALKIT_COMMIT" ]; then
           echo "vlmevalkit_env: $SRC was made from commit $got, not $VLMEVALKIT_COMMIT" >&2; exit 2
         fi
         tar -xf "$SRC" -C "$tmp" ;;
    esac
  else
    echo "vlmevalkit_env: $SRC is neither a folder nor a file" >&2; exit 2
  fi
  # GitHub's tarballs and zips hold one top folder (VLMEvalKit-<commit>/): use it.
  top="$tmp"; [ -f "$top/setup.py" ] || { set -- "$tmp"/*/; [ $# -eq 1 ] && top=${1%/}; }
  [ -f "$top/setup.py" ] && [ -d "$top/vlmeval" ] || { echo "vlmevalkit_env: no setup.py and vlmeval/ in $SRC" >&2; exit 2; }
  rm -rf "$tree"; mv "$top" "$tree"; echo "$VLMEVALKIT_COMMIT" > "$tree/.vqa_robust_commit"
  echo "vlmevalkit_env: source of $VLMEVALKIT_COMMIT in $tree"
fi
# 2. The venv: torch first (the CPU wheel), VLMEvalKit without its requirements, then the import chain's packages.
[ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
pip="$venv/bin/python -m pip --disable-pip-version-check -q"
pin=$(mktemp); printf 'torch==2.13.0\ntorchvision==0.28.0\n' > "$pin"
$pip install torch==2.13.0
$pip install --no-deps -e "$tree"
$pip install -c "$pin" "${PACKAGES[@]}"
rm -f "$pin"
# 3. Repair: guard torchvision's unguarded fake-kernel registrations (scripts/guard_torchvision.py, as scripts/vllm_env.sh does).
"$venv/bin/python" "$(dirname "$0")/guard_torchvision.py" vlmevalkit_env
if ! check; then
  echo "vlmevalkit_env: run.py does not import; what it says:" >&2
  (cd "$tree" && "$venv/bin/python" -c "import run") >&2 || true
  exit 1
fi
echo "$want" > "$stamp"
echo "vlmevalkit_env: $VLMEVALKIT_ENV ready: $venv/bin/python $tree/run.py ($("$venv/bin/python" -c 'import torch, transformers, pandas; print("torch", torch.__version__, "transformers", transformers.__version__, "pandas", pandas.__version__)'))"
