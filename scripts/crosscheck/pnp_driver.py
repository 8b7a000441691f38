"""Run LAVIS 1.0.2's original PNP-VQA (`lavis/models/pnp_vqa_models/pnp_vqa.py`: `forward_itm`, `forward_cap`, `forward_qa`)
on tiny seeded versions of its three parts (BLIP ITM, BLIP captioner, UnifiedQA-v2 T5 FiD reader) and write their state
dicts (LAVIS's key names), the inputs and what each stage produced, for `tests/test_crosscheck_pnp.py`.

Runs inside the side environment `.side/lavis` (transformers 4.26.1); start it with `python scripts/crosscheck/pnp.py`.
Nothing of LAVIS is modified: the driver only (1) skips LAVIS's package `__init__`s (of `lavis`, `lavis.models`,
`lavis.processors`), which import every dataset, model and processor LAVIS has, by registering empty parent packages, (2) skips torchvision's registration of its compiled
detection operators (the only torchvision wheel here is built for CUDA torch; PNP-VQA needs none of them), (3) points
`BertTokenizer.from_pretrained("bert-base-uncased")` at a local tiny vocabulary, and (4) records, without changing them,
the patch indices `torch.multinomial` draws in `forward_cap` and the captioner's decoded texts before LAVIS cuts the prompt.
The settings are LAVIS's `projects/pnp-vqa/eval/vqav2_eval.yaml`; only the models are tiny. Captions are drawn one question
at a time with torch seeded by `vqa_robust.pnp.question_seed(42, question)`: `vqa_robust.base.seed_of(seed=42, question=question)`,
numpy's SeedSequence([42, crc32(question)]) as one 63-bit integer, the package's one seeding rule (written out here: the side
environment does not install vqa_robust).
"""
import io, json, os, sys, zlib
from pathlib import Path

from lavis_shims import local_bert_vocabulary, skip_package_inits
skip_package_inits("models", "processors")

import numpy as np, sentencepiece as spm, torch, transformers
from importlib.metadata import version
from PIL import Image
from transformers import T5Config, T5ForConditionalGeneration
from transformers.models.bert.configuration_bert import BertConfig
from lavis.models.blip_models.blip_caption import BlipCaption
from lavis.models.blip_models.blip_image_text_matching import BlipITM
from lavis.models.med import XBertEncoder, XBertLMHeadDecoder
from lavis.models.pnp_vqa_models.pnp_unifiedqav2_fid import PNPUnifiedQAv2FiD
from lavis.models.pnp_vqa_models.pnp_vqa import PNPVQA
from lavis.models.vit import VisionTransformerEncoder
from lavis.processors.blip_processors import BlipImageEvalProcessor, BlipQuestionProcessor

OUT = Path(sys.argv[1])
SEED, RUN_SEED = 0, 42
# vqav2_eval.yaml's run settings
YAML = dict(block_num=7, top_k=50, top_p=1, cap_min_length=10, cap_max_length=20, repetition_penalty=1, num_patches=20, num_captions=100,
            prompt="a picture of ", internal_bsz_fid=1, num_captions_fid=1, min_len=0, max_len=20, num_beams=1, image_size=384)
# tiny parts; ViT at the paper's 384 px / 16 px patches (compute_gradcam assumes 24 x 24 patches and 12 text heads)
V_WIDTH, V_DEPTH, V_HEADS, T_WIDTH, T_HEADS, ITM_LAYERS, DEC_LAYERS, T5_WIDTH, SCALE = 24, 2, 2, 24, 12, 9, 2, 32, 3.0
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = list(dict.fromkeys((". , ? a picture of what is the color shape in image are there any how many people yes no red blue green circle square "
                            "dog cat man woman sitting on table grass with and two small large white black standing near tree sky").split()))
QUESTIONS = ["What is the color of the circle?", "How many people are sitting on the table?", "Is there a dog in the image?",
             "What shape is on the grass?"]

vocab_dir = OUT / "bert"
local_bert_vocabulary(vocab_dir, SPECIAL + WORDS)

# T5's tokenizer is a sentencepiece model (pad 0, eos 1, unk 2, as T5's); trained here on the words above
t5_dir = OUT / "t5"; t5_dir.mkdir(parents=True, exist_ok=True)
model_bytes = io.BytesIO()
lines = [q.lower() for q in QUESTIONS] + [" ".join(WORDS[i:i + 7]) for i in range(0, len(WORDS), 3)] + ["\\n yes no 0 1 2 3 4 5"]
spm.SentencePieceTrainer.train(sentence_iterator=iter(lines * 5), model_writer=model_bytes, vocab_size=80, model_type="unigram",
                               pad_id=0, eos_id=1, unk_id=2, bos_id=-1, hard_vocab_limit=False, character_coverage=1.0, num_threads=1, minloglevel=2)
(t5_dir / "spiece.model").write_bytes(model_bytes.getvalue())

torch.manual_seed(SEED)
def text_config(layers, heads):
    return BertConfig(vocab_size=len(SPECIAL) + len(WORDS) + 2, hidden_size=T_WIDTH, num_hidden_layers=layers, num_attention_heads=heads,
                      intermediate_size=2 * T_WIDTH, max_position_embeddings=64, layer_norm_eps=1e-12, hidden_act="gelu", pad_token_id=0,
                      add_type_embeddings=False, encoder_width=V_WIDTH, add_cross_attention=True)
def vit():
    encoder = VisionTransformerEncoder(img_size=YAML["image_size"], patch_size=16, embed_dim=V_WIDTH, depth=V_DEPTH, num_heads=V_HEADS, mlp_ratio=2.0)
    encoder.vision_width = V_WIDTH  # set by VisionTransformerEncoder.from_config
    return encoder
itm = BlipITM(vit(), XBertEncoder(config=text_config(ITM_LAYERS, T_HEADS), add_pooling_layer=False), embed_dim=16, max_txt_len=35)
captioner = BlipCaption(vit(), XBertLMHeadDecoder(config=text_config(DEC_LAYERS, 2)), prompt=YAML["prompt"])
t5_config = T5Config(vocab_size=0, d_model=T5_WIDTH, d_kv=T5_WIDTH // 2, d_ff=2 * T5_WIDTH, num_layers=1, num_heads=2, initializer_factor=5.0,
                     decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, dropout_rate=0.0)
tokenizer_t5 = transformers.T5Tokenizer.from_pretrained(str(t5_dir))
tokenizer_t5.save_pretrained(str(t5_dir))  # tokenizer_config.json etc., as a hub T5 tokenizer folder has them
t5_config.vocab_size = len(tokenizer_t5)
reader = PNPUnifiedQAv2FiD(t5_config, str(t5_dir))
reader.load_unifiedqa(T5ForConditionalGeneration(t5_config).state_dict())
with torch.no_grad():  # random weights of std 0.02 give flat distributions: sharpen the BLIP parts
    for model in (itm, captioner):
        for name, p in model.named_parameters():
            if "norm" not in name.lower(): p.mul_(SCALE)
pnp = PNPVQA(itm, captioner, reader).eval()
tok = itm.tokenizer
assert (tok.bos_token_id, tok.enc_token_id) == (len(SPECIAL) + len(WORDS), len(SPECIAL) + len(WORDS) + 1)

rng = np.random.default_rng(SEED)
images = []
for i in range(len(QUESTIONS)):  # smooth random images: 8 x 8 colours upscaled to 64 x 64, plus noise
    small = rng.integers(0, 256, size=(8, 8, 3)).astype(np.uint8)
    im = np.asarray(Image.fromarray(small).resize((64, 64), Image.BILINEAR)).astype(np.int16) + rng.integers(-20, 21, size=(64, 64, 3))
    images.append(Image.fromarray(np.clip(im, 0, 255).astype(np.uint8)))
(OUT / "images").mkdir(exist_ok=True)
for i, im in enumerate(images): im.save(OUT / "images" / f"{i}.png")
images = [Image.open(OUT / "images" / f"{i}.png").convert("RGB") for i in range(len(images))]
vis, txt = BlipImageEvalProcessor(image_size=YAML["image_size"]), BlipQuestionProcessor()
pixels = torch.stack([vis(im) for im in images])
questions = [txt(q) for q in QUESTIONS]

# GradCAM at every block of the ITM text encoder (forward_itm, as predict_answers calls it), and the ITM match logits
gradcams = torch.stack([pnp.forward_itm({"image": pixels, "text_input": list(questions)}, block_num=b)["gradcams"] for b in range(ITM_LAYERS)])
itm_logits = itm({"image": pixels, "text_input": [q.strip("?") for q in questions]}, match_head="itm").detach()  # grad on: GradCAM hooks are set
block_gradcams = gradcams[YAML["block_num"]]
print("positive patches at block 7:", (block_gradcams > 0).sum(-1).tolist())

# captions, one question at a time under its seed; record the patch draws and the decoded texts before LAVIS cuts the prompt
draws, decoded, _multinomial = [], [], torch.multinomial
def recording_multinomial(input, num_samples, *args, **kwargs):
    out = _multinomial(input, num_samples, *args, **kwargs)
    if num_samples == YAML["num_patches"]: draws[-1].append(out.clone())
    return out
_batch_decode = captioner.tokenizer.batch_decode
def recording_batch_decode(*args, **kwargs):
    out = _batch_decode(*args, **kwargs); decoded[-1].append(list(out)); return out
def lavis_captions(cap_min_length, cap_max_length):
    "LAVIS's forward_cap for each question alone under its seed; its captions, patch draws (rounds, captions, patches) and decoded texts."
    captions, seeds = [], []
    draws.clear(); decoded.clear()
    with torch.no_grad():
        for i, q in enumerate(questions):
            seed = int(np.random.SeedSequence([RUN_SEED, zlib.crc32(q.encode())]).generate_state(1, np.uint64)[0] >> np.uint64(1)); seeds.append(seed)
            draws.append([]); decoded.append([])
            torch.manual_seed(seed)
            out = pnp.forward_cap({"image": pixels[i:i + 1], "text_input": [q], "gradcams": block_gradcams[i:i + 1]},
                                  cap_max_length=cap_max_length, cap_min_length=cap_min_length, top_p=YAML["top_p"], top_k=YAML["top_k"],
                                  repetition_penalty=YAML["repetition_penalty"], num_captions=YAML["num_captions"], num_patches=YAML["num_patches"])
            captions.append(out["captions"][0])
    n = YAML["num_captions"]
    patches = [torch.stack([torch.cat(d[k:k + n]) for k in range(0, len(d), n)]).sort(-1).values.to(torch.int16) for d in draws]
    return captions, seeds, patches, [list(d) for d in decoded]
torch.multinomial, captioner.tokenizer.batch_decode = recording_multinomial, recording_batch_decode
captions, seeds, patches, decoded_yaml = lavis_captions(YAML["cap_min_length"], YAML["cap_max_length"])
# short captions (1-2 words after the prompt) repeat, so LAVIS needs several rounds to collect 100 distinct ones
SHORT = dict(cap_min_length=5, cap_max_length=6)
captions_short, _, patches_short, decoded_short = lavis_captions(**SHORT)
torch.multinomial, captioner.tokenizer.batch_decode = _multinomial, _batch_decode

# the reader, on LAVIS's captions (forward_qa with the YAML's settings); and LAVIS's tokenisation of the first question's passages
with torch.no_grad():
    answers = pnp.forward_qa({"text_input": list(questions), "captions": captions}, num_beams=YAML["num_beams"], max_len=YAML["max_len"],
                             min_len=YAML["min_len"], internal_bsz_fid=YAML["internal_bsz_fid"], num_captions=YAML["num_captions"],
                             num_captions_fid=YAML["num_captions_fid"])
    samples = {"text_input": list(questions), "captions": captions}
    from lavis.models.pnp_vqa_models import prepare_qa_input
    prepare_qa_input(samples, num_captions=YAML["num_captions"], num_captions_fid=YAML["num_captions_fid"])
    passage_ids = reader.tokenizer(samples["question_captions"][0][:5], padding="longest", truncation=True).input_ids

torch.save({"model": itm.state_dict()}, OUT / "itm.pth")          # LAVIS's finetuned-checkpoint layout: {"model": state dict}
torch.save({"model": captioner.state_dict()}, OUT / "captioner.pth")
torch.save(reader.state_dict(), OUT / "reader.pth")                # the FiD reader as LAVIS holds it (encoder wrapped)
torch.save(dict(pixels_corner=pixels[:, :, :8, :8].clone(), pixels_mean=pixels.mean((2, 3)), gradcams=gradcams, itm_logits=itm_logits,
                patches=patches, patches_short=patches_short), OUT / "outputs.pt")
(OUT / "outputs.json").write_text(json.dumps(dict(
    questions=QUESTIONS, processed_questions=questions, seeds=seeds, captions=captions, decoded=decoded_yaml, answers=answers,
    short_settings=SHORT, captions_short=captions_short, decoded_short=decoded_short,
    passages_first5=samples["question_captions"][0][:5], passage_ids_first5=passage_ids), indent=1) + "\n")
(OUT / "provenance.json").write_text(json.dumps(dict(
    lavis=version("salesforce-lavis"), transformers=transformers.__version__, torch=torch.__version__, tokenizers=version("tokenizers"),
    sentencepiece=version("sentencepiece"), command="python scripts/crosscheck/pnp.py", original="lavis/models/pnp_vqa_models/pnp_vqa.py "
    "(PNPVQA.forward_itm, forward_cap, forward_qa), blip_image_text_matching.compute_gradcam, pnp_unifiedqav2_fid.PNPUnifiedQAv2FiD",
    settings=YAML, settings_source="LAVIS projects/pnp-vqa/eval/vqav2_eval.yaml", weight_seed=SEED, run_seed=RUN_SEED,
    caption_seed="torch.manual_seed(SeedSequence([42, crc32(processed question)]) as one 63-bit integer, vqa_robust.base.seed_of) before each question's forward_cap (one image at a time)",
    blip_scale=SCALE, tiny=dict(vision_width=V_WIDTH, vision_depth=V_DEPTH, vision_heads=V_HEADS, patch=16, text_width=T_WIDTH,
    itm_layers=ITM_LAYERS, itm_heads=T_HEADS, decoder_layers=DEC_LAYERS, decoder_heads=2, t5_width=T5_WIDTH, t5_layers=1, t5_heads=2),
    bert_vocab="bert/vocab.txt (+ [DEC], [ENC] added by LAVIS's init_tokenizer)", t5_tokenizer="t5/spiece.model (sentencepiece unigram)"),
    indent=1) + "\n")
print("rounds per question:", [len(p) for p in patches], [len(p) for p in patches_short], "captions:", [len(c) for c in captions], "answers:", answers)
