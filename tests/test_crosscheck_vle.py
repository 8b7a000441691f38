"""The VLE reimplementation (nbs/02b_vle.ipynb) against iflytek/VLE's own code, on the same tiny random weights.

The fixtures in tests/fixtures/crosscheck/vle/ were written by the original `VLEForVQA` (transformers 4.26.1, unmodified,
commit and command in provenance.json; regenerate with `python scripts/crosscheck/vle.py --vle-src PATH`): per
configuration a checkpoint folder in the published layout (the original's config.json and state dict, original key
names) and io.safetensors (inputs, the original's logits and pooled output). Here they are loaded through the package's
checkpoint path, as a hub checkpoint would be, and run on transformers 5.
"""
import json, shutil
from pathlib import Path
import pytest
import torch
from safetensors.torch import load_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "crosscheck" / "vle"
CONFIGURATIONS = ["deberta_v3_relative", "absolute_token_types", "long_question"]
ATOL = 1e-5
torch.set_num_threads(1)


def fixture(name):
    "The fixture folder, its inputs and the original's outputs."
    io = load_file(str(FIXTURES / name / "io.safetensors"))
    inputs = {k: io[k] for k in ("input_ids", "pixel_values", "attention_mask", "token_type_ids")}
    return FIXTURES / name, inputs, io


def test_provenance():
    provenance = json.loads((FIXTURES / "provenance.json").read_text())
    assert provenance["original"] == "iflytek/VLE"
    assert len(provenance["commit"]) == 40
    assert provenance["transformers"] == "4.26.1"
    assert provenance["command"].startswith("python scripts/crosscheck/vle.py")
    assert sorted(provenance["configurations"]) == sorted(CONFIGURATIONS)
    assert sum(f.stat().st_size for f in FIXTURES.rglob("*") if f.is_file()) < 2_000_000


@pytest.mark.parametrize("name", CONFIGURATIONS)
def test_every_original_key_is_mapped(name):
    "Each tensor of the original state dict lands, unchanged, on exactly one parameter; only the index buffers are dropped."
    from vqa_robust.vle import VLEForVQA, vle_state_dict, read_state_dict
    folder, _, _ = fixture(name)
    original = read_state_dict(folder / "model.safetensors")
    mapped = vle_state_dict(original)
    model = VLEForVQA.from_pretrained(str(folder), local_files_only=True)
    own = model.state_dict()
    rename = lambda key: key.replace("vle.vision_model.vision_model.", "vle.vision_model.", 1)  # transformers 5 un-nested CLIP
    assert sorted(mapped) == sorted(own)  # nothing missing, nothing unexpected
    assert sorted(own) == sorted(rename(k) for k in original if rename(k) in own)
    dropped = sorted(k for k in original if rename(k) not in own)
    assert dropped == ["vle.text_model.embeddings.position_ids", "vle.vision_model.vision_model.embeddings.position_ids"]
    for key in dropped:  # what transformers 5 rebuilds from the config: plain 0..n-1
        assert torch.equal(original[key], torch.arange(original[key].shape[-1])[None])
    for key in original:
        if key not in dropped: assert torch.equal(own[rename(key)], original[key]), key


@pytest.mark.parametrize("name", CONFIGURATIONS)
def test_logits_equal_original(name):
    "The original checkpoint folder loaded by `VLEForVQA.from_pretrained` gives the original's logits and pooled output."
    from vqa_robust.vle import VLEForVQA
    folder, inputs, io = fixture(name)
    model = VLEForVQA.from_pretrained(str(folder), local_files_only=True)
    with torch.no_grad():
        logits = model(**inputs).logits
        pooled = model.vle(**inputs).pooler_output
    torch.testing.assert_close(logits, io["logits"], atol=ATOL, rtol=0)
    torch.testing.assert_close(pooled, io["pooler_output"], atol=ATOL, rtol=0)
    assert (io["logits"][0] - io["logits"][1]).abs().max() > 0.05  # the examples differ: not a comparison of constants
    if name == "absolute_token_types":  # the token types reach the logits, so the comparison covers them
        with torch.no_grad(): plain = model(**{**inputs, "token_type_ids": torch.zeros_like(inputs["token_type_ids"])}).logits
        assert (plain - logits).abs().max() > 0.05
    if name == "long_question":  # far past the relative-position buckets, and padded
        assert inputs["attention_mask"].sum(1).tolist() == [60, 21]
        assert model.config.text_config.position_buckets == 8


def test_load_model_on_original_checkpoint(tmp_path):
    "`load_model(folder)` (family from config.json, processor, adapter) on an original checkpoint with a processor added."
    from transformers import CLIPImageProcessorPil
    from vqa_robust.zoo import load_model
    from vqa_robust.vle import write_spm_tokenizer
    folder, inputs, io = fixture("long_question")
    checkpoint = tmp_path / "vle"
    shutil.copytree(folder, checkpoint)
    size = inputs["pixel_values"].shape[-1]
    write_spm_tokenizer(checkpoint, ["what is the color of the shape?", "how many people are in the image?"])
    CLIPImageProcessorPil(size={"shortest_edge": size}, crop_size={"height": size, "width": size}).save_pretrained(checkpoint)
    adapter = load_model(str(checkpoint), device="cpu")
    assert adapter.spec.family == "vle"
    with torch.no_grad(): logits = adapter.model(**inputs).logits
    torch.testing.assert_close(logits, io["logits"], atol=ATOL, rtol=0)
