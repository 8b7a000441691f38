"""Run Salesforce's original BLIP VQA (LAVIS 1.0.2 `BlipVQA`, the same model and decoding as BLIP's `models/blip_vqa.py`
that VRB ran) on a tiny seeded model, and write what it answers as a fixture for `tests/test_crosscheck_blip.py`.

Runs inside the side environment `.side/lavis` (transformers 4.26.1); start it with `python scripts/crosscheck/blip.py`.
Nothing of LAVIS is modified: the driver only (1) skips LAVIS's package `__init__`s, which import every dataset, model
and processor LAVIS has, by registering empty parent packages, (2) skips torchvision's registration of its compiled
detection operators (the only torchvision wheel here is built for CUDA torch; BLIP needs none of them), and (3) points
`BertTokenizer.from_pretrained("bert-base-uncased")` at a local tiny vocabulary.
"""
import json, os, sys
from functools import partial
from pathlib import Path

from lavis_shims import local_bert_vocabulary, skip_package_inits
skip_package_inits("models")

import numpy as np, torch, transformers
from importlib.metadata import version
from PIL import Image
from torchvision import transforms
from torchvision.transforms.functional import InterpolationMode
from transformers.models.bert.configuration_bert import BertConfig
from lavis.models.blip_models.blip_vqa import BlipVQA
from lavis.models.med import XBertEncoder, XBertLMHeadDecoder
from lavis.models.vit import VisionTransformerEncoder

OUT = Path(sys.argv[1])
SEED, IMAGE_SIZE, PATCH, WIDTH, LAYERS, HEADS, MLP = 0, 32, 8, 32, 2, 2, 64
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = sorted(set(("what is the color of shape in image are there any how many people a ? yes no red blue green circle "
                    "triangle rectangle 1 2 3 dog cat man woman on table left right").split()))
QUESTIONS = ["what is the color of the shape?", "is there a circle?", "how many people are in the image?", "what shape is it?",
             "is the dog on the table?", "are there any cats?", "what color is the man?", "is it red?",
             "how many shapes are there?", "what is in the image?", "is there a woman on the left?", "what is on the table?"] * 4  # 48 images
NUM_BEAMS, MAX_LENGTH, MIN_LENGTH = 3, 10, 1  # VRB's decoding (BLIP's models/blip_vqa.py, inference="generate")
MEAN, STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)  # BLIP's / LAVIS's eval transform
SCALE, EOS_BIAS = float(os.environ.get("BLIP_SCALE", 6.0)), float(os.environ.get("BLIP_EOS_BIAS", 1.75))

vocab_dir = OUT / "vocab"
local_bert_vocabulary(vocab_dir, SPECIAL + WORDS)

torch.manual_seed(SEED)
text_config = BertConfig(vocab_size=len(SPECIAL) + len(WORDS) + 2, hidden_size=WIDTH, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                         intermediate_size=MLP, max_position_embeddings=40, layer_norm_eps=1e-12, hidden_act="gelu", pad_token_id=0,
                         add_type_embeddings=False, encoder_width=WIDTH, add_cross_attention=True)
image_encoder = VisionTransformerEncoder(img_size=IMAGE_SIZE, patch_size=PATCH, embed_dim=WIDTH, depth=LAYERS, num_heads=HEADS,
                                         mlp_ratio=MLP / WIDTH)  # LayerNorm eps 1e-6, the original's default
model = BlipVQA(image_encoder, XBertEncoder(config=text_config, add_pooling_layer=False), XBertLMHeadDecoder(config=text_config), max_txt_len=35)
model.eval()
with torch.no_grad():  # random weights of std 0.02 give flat answer distributions; sharpen them so beams end at different lengths
    for name, p in model.named_parameters():
        if "norm" not in name.lower(): p.mul_(SCALE)
    model.text_decoder.cls.predictions.bias[model.tokenizer.sep_token_id] += EOS_BIAS
tok = model.tokenizer
assert (tok.bos_token_id, tok.enc_token_id) == (len(SPECIAL) + len(WORDS), len(SPECIAL) + len(WORDS) + 1), (tok.bos_token_id, tok.enc_token_id)

rng = np.random.default_rng(SEED)
images = rng.integers(0, 256, size=(len(QUESTIONS), IMAGE_SIZE, IMAGE_SIZE, 3), dtype=np.uint8)
transform = transforms.Compose([transforms.Resize((IMAGE_SIZE, IMAGE_SIZE), interpolation=InterpolationMode.BICUBIC),
                                transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
pixels = torch.stack([transform(Image.fromarray(im)) for im in images])

with torch.no_grad():
    plain = model.predict_answers({"image": pixels, "text_input": list(QUESTIONS)}, num_beams=NUM_BEAMS, inference_method="generate",
                                  max_len=MAX_LENGTH, min_len=MIN_LENGTH)
    captured, generate = {}, model.text_decoder.generate
    def generate_all_beams(*args, **kwargs):
        "The original call, asked also for every beam and its score; hands the original code its usual top beams."
        out = generate(*args, **kwargs, num_return_sequences=kwargs["num_beams"], output_scores=True, return_dict_in_generate=True)
        captured.update(sequences=out.sequences, scores=out.sequences_scores)
        return out.sequences[::kwargs["num_beams"]]
    model.text_decoder.generate = generate_all_beams
    answers = model.predict_answers({"image": pixels, "text_input": list(QUESTIONS)}, num_beams=NUM_BEAMS, inference_method="generate",
                                    max_len=MAX_LENGTH, min_len=MIN_LENGTH)
    encoded = tok(list(QUESTIONS), padding="longest", truncation=True, max_length=35, return_tensors="pt")
assert answers == plain, (answers, plain)

n = len(QUESTIONS)
sequences = captured["sequences"].view(n, NUM_BEAMS, -1)
torch.save(model.state_dict(), OUT / "original_state_dict.pt")
np.savez_compressed(OUT / "inputs.npz", images=images, pixel_values=pixels.numpy())
config = dict(image_size=IMAGE_SIZE, patch_size=PATCH, hidden_size=WIDTH, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
              intermediate_size=MLP, vision_layer_norm_eps=1e-6, text_layer_norm_eps=1e-12, max_position_embeddings=40,
              vocab_size=text_config.vocab_size, pad_token_id=tok.pad_token_id, sep_token_id=tok.sep_token_id, cls_token_id=tok.cls_token_id,
              bos_token_id=tok.bos_token_id, enc_token_id=tok.enc_token_id, image_mean=MEAN, image_std=STD)
result = dict(
    provenance=dict(code="salesforce-lavis 1.0.2, lavis/models/blip_models/blip_vqa.py BlipVQA.predict_answers(inference_method='generate') "
                         "(same generate branch as salesforce/BLIP models/blip_vqa.py)",
                    lavis=version("salesforce-lavis"), transformers=transformers.__version__, torch=torch.__version__,
                    timm=version("timm"), command="python scripts/crosscheck/blip.py",
                    weights=f"seed {SEED}, LAVIS's own initialisation, non-norm parameters x{SCALE}, decoder bias of [SEP] +{EOS_BIAS}"),
    config=config, decoding=dict(num_beams=NUM_BEAMS, max_length=MAX_LENGTH, min_length=MIN_LENGTH),
    questions=QUESTIONS, question_input_ids=encoded.input_ids.tolist(), answers=answers,
    beam_ids=[[[int(t) for t in s] for s in q] for q in sequences.tolist()],
    beam_scores=captured["scores"].view(n, NUM_BEAMS).tolist())
(OUT / "original.json").write_text(json.dumps(result, indent=1) + "\n")
print(json.dumps(dict(answers=answers, lengths=[[sum(t != tok.pad_token_id for t in s) for s in q] for q in result["beam_ids"]]), indent=None))
