"""PNP-VQA checked against LAVIS 1.0.2's original code (`lavis/models/pnp_vqa_models/pnp_vqa.py`) on the same tiny random weights.

The fixture `tests/fixtures/crosscheck/pnp/` was written by `python scripts/crosscheck/pnp.py` (LAVIS 1.0.2, transformers 4.26.1, in a
side environment; see its provenance.json): LAVIS's own state dicts of a tiny BLIP ITM, BLIP captioner and T5 FiD reader, four images
and questions, and what LAVIS's `forward_itm`, `forward_cap` and `forward_qa` produced with the settings of
`projects/pnp-vqa/eval/vqav2_eval.yaml` (each question's captions under torch seeded with `question_seed(42, question)`).
Here the package converts those state dicts with `pnp_from_lavis`, loads the folder with `load_model` (its real loading path) and
must reproduce every stage.
"""
import json
from pathlib import Path
import pytest, torch
from PIL import Image
from vqa_robust.zoo import load_model
from vqa_robust.pnp import cut_prompt, itm_gradcam, itm_text, pnp_from_lavis, pre_question, question_guided_captions, question_seed, read, passages, seeded

FIXTURE = Path(__file__).parent / "fixtures" / "crosscheck" / "pnp"
OUT = json.loads((FIXTURE / "outputs.json").read_text())
TENSORS = torch.load(FIXTURE / "outputs.pt", weights_only=True)
PROVENANCE = json.loads((FIXTURE / "provenance.json").read_text())
TINY = PROVENANCE["tiny"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    torch.set_num_threads(1)
    folder = pnp_from_lavis(tmp_path_factory.mktemp("pnp") / "lavis-tiny", FIXTURE / "itm.pth", FIXTURE / "captioner.pth", FIXTURE / "reader.pth",
                            FIXTURE / "bert", FIXTURE / "t5", vision_heads=TINY["vision_heads"], text_heads=TINY["itm_heads"],
                            captioner_text_heads=TINY["decoder_heads"])
    return load_model(str(folder), device="cpu")


@pytest.fixture(scope="module")
def images():
    return [Image.open(FIXTURE / "images" / f"{i}.png").convert("RGB") for i in range(len(OUT["questions"]))]


def test_provenance():
    assert PROVENANCE["lavis"] == "1.0.2"
    assert PROVENANCE["transformers"] == "4.26.1"
    assert PROVENANCE["settings_source"] == "LAVIS projects/pnp-vqa/eval/vqav2_eval.yaml"


def test_defaults_are_lavis(model):
    "The folder's settings are the family's defaults, which are the YAML's (the tiny models keep the paper's 384 px and 24 x 24 patches)."
    s, y = model.spec.settings, PROVENANCE["settings"]
    assert (s["block"], s["n_captions"], s["n_patches"], s["top_k"], s["top_p"]) == (y["block_num"], y["num_captions"], y["num_patches"], y["top_k"], y["top_p"])
    assert (s["caption_min_length"], s["caption_max_length"], s["reader_max_length"], s["image_size"]) == (y["cap_min_length"], y["cap_max_length"], y["max_len"], y["image_size"])
    assert (s["prompt"], s["prompt_cut"], s["max_caption_rounds"]) == (y["prompt"], "chars", None)


def test_inputs(model, images):
    "Question processing, image preprocessing and the reader's tokenisation equal LAVIS's."
    assert [pre_question(q) for q in OUT["questions"]] == OUT["processed_questions"]
    assert [question_seed(42, q) for q in OUT["processed_questions"]] == OUT["seeds"]
    pixels = model.pixels(model.itm_processor, images, model.itm)
    torch.testing.assert_close(pixels[:, :, :8, :8], TENSORS["pixels_corner"], atol=1e-6, rtol=0)
    torch.testing.assert_close(pixels.mean((2, 3)), TENSORS["pixels_mean"], atol=1e-6, rtol=0)
    assert model.reader_tokenizer(OUT["passages_first5"], padding="longest").input_ids == OUT["passage_ids_first5"]


def test_gradcam_every_block(model, images):
    "GradCAM at each of the ITM's blocks equals LAVIS's compute_gradcam (relative to the map's scale)."
    text = itm_text(model.itm_processor.tokenizer, OUT["processed_questions"], model.enc_token)
    pixels = model.pixels(model.itm_processor, images, model.itm)
    for block, expected in enumerate(TENSORS["gradcams"]):
        got = itm_gradcam(model.itm, text, pixels, block).flatten(1)
        scale = float(expected.abs().max()) or 1.0
        assert float((got - expected).abs().max()) <= 1e-5 * scale, block


def test_patches_and_captions(model, images):
    "Under each question's seed: identical patch draws in every round, and LAVIS's captions, all of them identical."
    s = model.spec.settings
    gradcams = TENSORS["gradcams"][PROVENANCE["settings"]["block_num"]]
    with torch.no_grad():
        embeds = model.captioner.vision_model(pixel_values=model.pixels(model.captioner_processor, images, model.captioner)).last_hidden_state
    draws = []
    original = torch.multinomial
    def spy(input, num_samples, *args, **kwargs):
        out = original(input, num_samples, *args, **kwargs)
        if num_samples == s["n_patches"]: draws[-1].append(out.sort(-1).values)
        return out
    for key, lengths, expected_patches in (("captions", {}, TENSORS["patches"]),
                                           ("captions_short", {"min_length": OUT["short_settings"]["cap_min_length"],
                                                               "max_length": OUT["short_settings"]["cap_max_length"]}, TENSORS["patches_short"])):
        for i, question in enumerate(OUT["processed_questions"]):
            draws.append([])
            torch.multinomial = spy
            try:
                with torch.no_grad(), seeded(question_seed(s["seed"], question)):
                    captions = question_guided_captions(model.captioner, model.captioner_processor.tokenizer, embeds[i], gradcams[i].reshape(24, 24),
                                                        s["n_captions"], s["n_patches"], s["prompt"], s["top_k"], s["top_p"],
                                                        **{"min_length": s["caption_min_length"], "max_length": s["caption_max_length"], **lengths},
                                                        repetition_penalty=s["repetition_penalty"], max_rounds=s["max_caption_rounds"], prompt_cut=s["prompt_cut"])
            finally: torch.multinomial = original
            assert torch.equal(torch.stack(draws[-1]), expected_patches[i].long()), (key, i)
            assert captions == OUT[key][i], (key, i)


def test_reader_on_lavis_captions(model):
    "The FiD reader, given LAVIS's captions, writes LAVIS's answers."
    qs = OUT["processed_questions"]
    with torch.no_grad():
        answers, _ = read(model.reader, model.reader_tokenizer, [passages(q, c) for q, c in zip(qs, OUT["captions"])], max_length=20)
    assert answers == OUT["answers"]


def test_end_to_end(model, images):
    "`evidence`, the adapter's whole pipeline on the batch: LAVIS's GradCAM maps, captions and answers."
    evidence = model.evidence(images, OUT["questions"])
    expected = TENSORS["gradcams"][PROVENANCE["settings"]["block_num"]]
    assert float((evidence["gradcams"].flatten(1) - expected).abs().max()) <= 1e-5 * float(expected.abs().max())
    assert evidence["captions"] == OUT["captions"]
    assert evidence["answers"] == OUT["answers"]


def test_prefix_cut_departs_only_on_punctuation():
    "The package's other prompt cut ('prefix') keeps a first punctuation token that LAVIS's character cut drops; no other caption changes."
    prompt = PROVENANCE["settings"]["prompt"]
    decoded = [t for question in OUT["decoded"] for round_ in question for t in round_]
    differ = [t for t in decoded if cut_prompt(t, prompt, "chars") != cut_prompt(t, prompt, "prefix")]
    assert differ
    assert all(t[len(prompt) - 1] in ",.?" for t in differ)
    assert all(cut_prompt(t, prompt, "prefix") == t[len(prompt) - 1] + cut_prompt(t, prompt, "chars") for t in differ)
