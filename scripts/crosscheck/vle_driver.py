"""Run iflytek/VLE's own `VLEForVQA` (unmodified, imported from a checkout) on tiny seeded configurations; write fixtures.

Runs inside the side environment that `scripts/crosscheck/vle.py` builds (transformers 4.26.1, the version VLE's README
names), never in the project's venv. For each configuration it writes a checkpoint folder in the published layout:
`config.json` (the original `VLEConfig.save_pretrained`), `model.safetensors` (the original `state_dict()`, the
original key names, `position_ids` buffers included), and `io.safetensors` (the fixed inputs and the original's
outputs). Nothing of the original is copied: it is imported from `--vle-src`.

    python vle_driver.py --vle-src PATH --out tests/fixtures/crosscheck/vle
"""
import argparse, json, math, platform, sys
from pathlib import Path

# Tiny configurations in the published form (`config.json` of hfl/vle-base-for-vqa, shrunk). Each names what it exercises.
CONFIGS = {
    "deberta_v3_relative": dict(
        what="DeBERTa-v3 text encoder as published: relative attention (p2c, c2p, log buckets, shared keys), no absolute "
             "positions, no token types; CLIP 48 px, 8 px patches; 2 co-attention layers; batch of 2 with padding",
        seed=11, image_size=48, lengths=[9, 5], token_types=False,
        text=dict(model_type="deberta-v2", vocab_size=64, hidden_size=24, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2,
                  max_position_embeddings=64, position_buckets=8, type_vocab_size=0, position_biased_input=False, relative_attention=True,
                  pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", share_att_key=True, max_relative_positions=-1, pad_token_id=0,
                  layer_norm_eps=1e-7),
        vision=dict(model_type="clip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                    image_size=48, patch_size=8, hidden_act="quick_gelu", layer_norm_eps=1e-5, projection_dim=16),
        fusion=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2, layer_norm_eps=1e-12)),
    "absolute_token_types": dict(
        what="DeBERTa with absolute position embeddings and 2 token types (relative attention off), token_type_ids not all "
             "zero; CLIP 64 px, 16 px patches; 1 co-attention layer of 4 heads; batch of 3",
        seed=22, image_size=64, lengths=[12, 7, 4], token_types=True,
        text=dict(model_type="deberta-v2", vocab_size=50, hidden_size=16, intermediate_size=40, num_hidden_layers=1, num_attention_heads=2,
                  max_position_embeddings=32, type_vocab_size=2, position_biased_input=True, relative_attention=False,
                  pad_token_id=0, layer_norm_eps=1e-7),
        vision=dict(model_type="clip_vision_model", hidden_size=24, intermediate_size=48, num_hidden_layers=1, num_attention_heads=3,
                    image_size=64, patch_size=16, hidden_act="quick_gelu", layer_norm_eps=1e-5, projection_dim=8),
        fusion=dict(hidden_size=24, intermediate_size=48, num_hidden_layers=1, num_attention_heads=4, layer_norm_eps=1e-12)),
    "long_question": dict(
        what="a 60-token question (far past DeBERTa-v3's 8 position buckets: log-bucketed relative positions) beside a "
             "21-token one padded to it; relative attention as published; CLIP 32 px, 8 px patches; 2 co-attention layers",
        seed=33, image_size=32, lengths=[60, 21], token_types=False,
        text=dict(model_type="deberta-v2", vocab_size=96, hidden_size=24, intermediate_size=48, num_hidden_layers=2, num_attention_heads=3,
                  max_position_embeddings=128, position_buckets=8, type_vocab_size=0, position_biased_input=False, relative_attention=True,
                  pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", share_att_key=True, max_relative_positions=-1, pad_token_id=0,
                  layer_norm_eps=1e-7),
        vision=dict(model_type="clip_vision_model", hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                    image_size=32, patch_size=8, hidden_act="quick_gelu", layer_norm_eps=1e-5, projection_dim=8),
        fusion=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2, layer_norm_eps=1e-12)),
}
ANSWERS = ["yes", "no", "red", "blue", "circle", "two", "three"]


def randomise(model, torch, seed):
    "Overwrite every parameter with seeded values of a scale that keeps activations O(1) (no saturated softmax or tanh)."
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64)
            is_norm = p.ndim == 1 and any(s in name.lower() for s in ("norm", "layrnorm", "vqa_classifier.1."))
            if is_norm: value = (1 + 0.2 * noise) if name.endswith("weight") else 0.2 * noise
            elif p.ndim == 1: value = 0.2 * noise                          # biases, CLIP's class embedding
            elif "embedding" in name: value = noise                         # word, position, token-type, relative embeddings
            else: value = 1.5 * noise / math.sqrt(p[0].numel())             # linear and conv weights: ~unit-variance outputs
            p.copy_(value.to(p.dtype))


def inputs_for(spec, torch):
    "Fixed input ids (CLS ... SEP, then padding), attention mask, token types and pixel values from the configuration's seed."
    g = torch.Generator().manual_seed(spec["seed"] + 1000)
    batch, longest, vocab = len(spec["lengths"]), max(spec["lengths"]), spec["text"]["vocab_size"]
    input_ids = torch.zeros(batch, longest, dtype=torch.long)
    attention_mask = torch.zeros(batch, longest, dtype=torch.long)
    token_type_ids = torch.zeros(batch, longest, dtype=torch.long)
    for i, n in enumerate(spec["lengths"]):
        input_ids[i, :n] = torch.cat([torch.tensor([1]), torch.randint(4, vocab, (n - 2,), generator=g), torch.tensor([2])])
        attention_mask[i, :n] = 1
        if spec["token_types"]: token_type_ids[i, n // 2:n] = 1          # a second segment in the back half of each question
    pixel_values = torch.randn(batch, 3, spec["image_size"], spec["image_size"], generator=g)
    return dict(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, pixel_values=pixel_values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vle-src", required=True, help="a checkout of iflytek/VLE (its models/VLE is imported, unmodified)")
    parser.add_argument("--out", required=True, help="folder for the fixtures")
    parser.add_argument("--provenance", default="{}", help="JSON merged into provenance.json (commit, command: from the caller)")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.vle_src).resolve()))
    import torch, transformers, safetensors
    from safetensors.torch import save_file
    from models.VLE import VLEConfig, VLEForVQA  # the original code
    torch.set_num_threads(1)
    out = Path(args.out); out.mkdir(parents=True, exist_ok=True)
    provenance = dict(json.loads(args.provenance), transformers=transformers.__version__, torch=torch.__version__,
                      safetensors=safetensors.__version__, python=platform.python_version(), configurations={})
    for name, spec in CONFIGS.items():
        id2label = dict(enumerate(ANSWERS))
        config = VLEConfig(text_config=dict(spec["text"]), vision_config=dict(spec["vision"]), id2label=id2label,
                           label2id={a: i for i, a in id2label.items()}, **spec["fusion"])
        torch.manual_seed(spec["seed"])
        model = VLEForVQA(config).eval()
        randomise(model, torch, spec["seed"])
        inputs = inputs_for(spec, torch)
        with torch.no_grad():
            logits = model(**inputs, return_dict=True).logits
            pooled = model.vle(**inputs, return_dict=True).pooler_output
            # what the token types and the padding change, so that a test can tell the comparison is not vacuous
            no_types = model(**{**inputs, "token_type_ids": torch.zeros_like(inputs["token_type_ids"])}, return_dict=True).logits
        folder = out / name; folder.mkdir(exist_ok=True)
        config.save_pretrained(folder)  # the original VLEConfig's config.json, as the hub checkpoints were written
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
        save_file({**inputs, "logits": logits, "pooler_output": pooled}, str(folder / "io.safetensors"))
        provenance["configurations"][name] = dict(
            what=spec["what"], seed=spec["seed"], question_lengths=spec["lengths"], n_keys=len(state),
            n_parameters=sum(p.numel() for p in model.parameters()),
            logits_range=[round(logits.min().item(), 4), round(logits.max().item(), 4)],
            token_types_change_logits_by=round((logits - no_types).abs().max().item(), 6))
        print(f"{name}: {len(state)} keys, logits {tuple(logits.shape)}, |logits| max {logits.abs().max().item():.3f}")
    (out / "provenance.json").write_text(json.dumps(provenance, indent=1) + "\n")


if __name__ == "__main__": main()
