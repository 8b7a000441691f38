"""BLIP VQA as VRB ran it, checked against Salesforce's original code (LAVIS 1.0.2 `BlipVQA`, transformers 4.26.1).

`tests/fixtures/crosscheck/blip/` holds a tiny seeded BLIP VQA under the original's key names, 48 fixed image-question pairs,
and what the original's generate-mode answering (3 beams, 1-10 tokens) gave: answers, every beam's token ids and score.
It was written by `python scripts/crosscheck/blip.py` (see `original.json`'s provenance). Here the state dict goes through the
package's key mapping into transformers 5's BlipForQuestionAnswering, is loaded by `load_model` like any checkpoint folder,
and is answered with the package's VRB decoding ([ENC] first, transformers 4.x's beam search).
"""
import json
from pathlib import Path
import numpy as np
import pytest
import torch
from vqa_robust.blip import convert_original_blip, original_blip_config, original_blip_key, original_blip_processor
from vqa_robust.models import to_model
from vqa_robust.zoo import load_model

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "crosscheck" / "blip"
REFERENCE = json.loads((FIXTURE / "original.json").read_text())

def fixture_config_and_processor():
    "The package's BlipConfig and BlipProcessor for the fixture's tiny original model (its sizes and token ids)."
    c = REFERENCE["config"]
    sizes = {k: c[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "max_position_embeddings")}
    config = original_blip_config(c["vocab_size"], c["image_size"], c["pad_token_id"], c["sep_token_id"], vision_sizes={"patch_size": c["patch_size"]}, **sizes)
    return config, original_blip_processor(FIXTURE / "vocab", c["image_size"])

@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    config, processor = fixture_config_and_processor()
    return convert_original_blip(FIXTURE / "original_state_dict.pt", config, processor, tmp_path_factory.mktemp("blip") / "original-blip")

@pytest.fixture(scope="module")
def inputs():
    arrays = np.load(FIXTURE / "inputs.npz")
    return list(arrays["images"]), arrays["pixel_values"]

def encoded(model, images, questions=None):
    encoder = model.encoder()
    return to_model(encoder.batch(images, encoder.questions(questions or REFERENCE["questions"])), "cpu", model.model.dtype)

def test_every_original_key_is_mapped():
    state = torch.load(FIXTURE / "original_state_dict.pt", weights_only=True)
    names = {original_blip_key(k) for k in state} - {None}
    from transformers import BlipForQuestionAnswering
    expected = set(BlipForQuestionAnswering(fixture_config_and_processor()[0]).state_dict())
    assert names == expected
    assert original_blip_key("visual_encoder.blocks.11.attn.proj.weight") == "vision_model.encoder.layers.11.self_attn.projection.weight"
    assert original_blip_key("visual_encoder.norm.bias") == "vision_model.post_layernorm.bias"
    with pytest.raises(KeyError, match="no transformers name"): original_blip_key("visual_encoder.head.weight")

def test_config_matches_the_original(folder):
    config, processor = fixture_config_and_processor()
    c = REFERENCE["config"]
    assert (config.vision_config.layer_norm_eps, config.text_config.layer_norm_eps) == (c["vision_layer_norm_eps"], c["text_layer_norm_eps"])
    assert processor.tokenizer.convert_tokens_to_ids(["[DEC]", "[ENC]"]) == [c["bos_token_id"], c["enc_token_id"]]
    assert processor.tokenizer(REFERENCE["questions"], padding="longest").input_ids == REFERENCE["question_input_ids"]

def test_loaded_with_vrb_settings(folder):
    model = load_model(str(folder), device="cpu")
    assert {k: model.spec.settings[k] for k in ("question_start", "beam_search", "num_beams", "max_length", "min_length")} == \
        {"question_start": "enc", "beam_search": "vrb", "num_beams": 3, "max_length": 10, "min_length": 1}
    assert all(m.eps == 1e-6 for m in model.model.vision_model.modules() if isinstance(m, torch.nn.LayerNorm))

def test_same_inputs_as_the_original(folder, inputs):
    model = load_model(str(folder), device="cpu")
    batch = encoded(model, inputs[0])
    np.testing.assert_allclose(batch["pixel_values"].numpy(), inputs[1], atol=1e-6)
    enc = REFERENCE["config"]["enc_token_id"]
    assert model.question_ids(batch["input_ids"]).tolist() == [[enc] + ids[1:] for ids in REFERENCE["question_input_ids"]]

def test_question_start_changes_the_first_token(folder, inputs):
    ids = {start: load_model(str(folder), device="cpu", question_start=start) for start in ("cls", "enc")}
    batch = encoded(ids["cls"], inputs[0][:2], REFERENCE["questions"][:2])
    c = REFERENCE["config"]
    assert ids["cls"].question_ids(batch["input_ids"])[:, 0].tolist() == [c["cls_token_id"]] * 2
    assert ids["enc"].question_ids(batch["input_ids"])[:, 0].tolist() == [c["enc_token_id"]] * 2
    assert torch.equal(ids["cls"].question_ids(batch["input_ids"])[:, 1:], ids["enc"].question_ids(batch["input_ids"])[:, 1:])
    with pytest.raises(ValueError, match="question_start must be one of"):
        load_model(str(folder), device="cpu", question_start="bos").question_ids(batch["input_ids"])
    with_cls = ids["cls"].predict(inputs[0], REFERENCE["questions"])[0]  # the same weights asked with [CLS]: other answers
    assert sum(a == b for a, b in zip(with_cls, REFERENCE["answers"])) < len(REFERENCE["answers"]) // 2

def test_fixture_has_finished_and_full_length_beams():
    "The fixture exercises both of 4.x's scoring cases: answers that ended with [SEP] and beams that ran to max_length."
    ended = [REFERENCE["config"]["sep_token_id"] in beam for question in REFERENCE["beam_ids"] for beam in question]
    assert sum(ended) >= 50
    assert len(ended) - sum(ended) >= 20
    assert any(REFERENCE["config"]["sep_token_id"] not in question[0] for question in REFERENCE["beam_ids"])  # some best answers ran to the limit

def test_all_beams_and_scores_equal_the_original(folder, inputs):
    model = load_model(str(folder), device="cpu")
    with torch.inference_mode(): sequences, scores, sums = model.beams(encoded(model, inputs[0]))
    assert sequences.tolist() == REFERENCE["beam_ids"]  # token for token, padding and end tokens included
    np.testing.assert_allclose(scores.numpy(), np.array(REFERENCE["beam_scores"]), atol=1e-5, rtol=0)

def test_answers_equal_the_original(folder, inputs):
    answers, confidence = load_model(str(folder), device="cpu").predict(inputs[0], REFERENCE["questions"])
    assert answers == REFERENCE["answers"]
    ids = np.array(REFERENCE["beam_ids"])[:, 0]
    lengths = np.where(ids == REFERENCE["config"]["sep_token_id"], np.arange(ids.shape[1]), ids.shape[1]).min(1)  # [DEC] + answer tokens
    np.testing.assert_allclose(np.log(confidence), np.array(REFERENCE["beam_scores"])[:, 0] * lengths, atol=1e-4)  # 4.x: score = sum / length
