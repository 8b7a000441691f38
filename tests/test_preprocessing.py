"""The package's pixels equal each real checkpoint's own image processor on COCO's photo shapes (issue 18).

ViLT and BLIP: `fast_pixels` (the encoder's one-lookup path) against the transformers PIL-backend processor built,
offline, from the checkpoint's `preprocessor_config.json` as published on the hub. VLE has no fast path: its
`VLEProcessor` and the encoder inference uses are checked against the same CLIP processor and an independent
PIL + numpy transcription of the rule. Images are seeded photo-like content (smooth gradients plus noise, so that
a different filter, size or crop shows), and grayscale and CMYK JPEGs are read through the data loader's
`VQADataset.load_image`.

Tolerances: fast path vs processor, exact (`torch.equal`, same dtype); package vs the independent float64
transcription, max |difference| < 1e-5.
"""
import json
import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image
from transformers import AutoImageProcessor

from vqa_robust.vqav2 import VQADataset, coco_image_template
from vqa_robust.models import FAST_PIXELS, PADDING_PROCESSORS, ProcessorEncoder, fast_pixels, pixel_table, to_model, WEIGHTS_DIR

torch.set_num_threads(1)

CLIP_MEAN, CLIP_STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
# preprocessor_config.json of huggingface.co/dandelin/vilt-b32-finetuned-vqa (legacy keys, as published)
VILT_CONFIG = {"do_normalize": True, "do_resize": True, "feature_extractor_type": "ViltFeatureExtractor", "image_mean": [0.5] * 3,
               "image_std": [0.5] * 3, "resample": 3, "size": 384, "size_divisor": 32}
# preprocessor_config.json of huggingface.co/Salesforce/blip-vqa-capfilt-large (VRB runs it at 480: the entry's image_size)
BLIP_CONFIG = {"do_normalize": True, "do_resize": True, "image_mean": CLIP_MEAN, "image_processor_type": "BlipImageProcessor",
               "image_std": CLIP_STD, "processor_class": "BlipProcessor", "resample": 3, "rescale_factor": 0.00392156862745098,
               "size": {"height": 384, "width": 384}}
def vle_config(size: int) -> dict:
    "preprocessor_config.json of huggingface.co/hfl/vle-base-for-vqa (576); vle-large's is the same at 504."
    return {"crop_size": {"height": size, "width": size}, "do_center_crop": True, "do_convert_rgb": True, "do_normalize": True,
            "do_rescale": True, "do_resize": True, "feature_extractor_type": "CLIPFeatureExtractor", "image_mean": CLIP_MEAN,
            "image_processor_type": "CLIPImageProcessor", "image_std": CLIP_STD, "processor_class": "VLEProcessor", "resample": 3,
            "rescale_factor": 0.00392156862745098, "size": {"shortest_edge": size}}

# (width, height) as photos are described; COCO val2014 is mostly 640 x 480 / 480 x 640 / 640 x 427
SHAPES = [(640, 480), (480, 640), (640, 360), (640, 427), (500, 375), (612, 612), (1280, 720)]

# Output (height, width) worked by hand from ViLT's rule: shorter edge to S, longer edge capped at int(1333 / 800 * S)
# (639 for S=384, 106 for S=64) by scaling both, each side rounded (int(x + 0.5)) then floored to a multiple of 32.
# e.g. 640x360 at 384: 384 x 682.7 -> cap 639: 359.4 x 639 -> 359 x 639 -> 352 x 608.
VILT_384_SIZES = {(640, 480): (384, 512), (480, 640): (512, 384), (640, 360): (352, 608), (640, 427): (384, 576),
                  (500, 375): (384, 512), (612, 612): (384, 384), (1280, 720): (352, 608)}
# the shipped easy-VQA ViLT (S=64): 640x360: 64 x 113.8 -> cap 106: 59.6 x 106 -> 60 x 106 -> 32 x 96
VILT_64_SIZES = {(640, 480): (64, 64), (480, 640): (64, 64), (640, 360): (32, 96), (640, 427): (64, 96),
                 (500, 375): (64, 64), (612, 612): (64, 64), (1280, 720): (32, 96)}

def photo(width: int, height: int, seed: int) -> np.ndarray:
    "A seeded photo-like uint8 RGB image: smooth colour gradients and a blob, plus sensor-like noise."
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width] / max(height, width)
    phase = rng.uniform(0, 2 * np.pi, 3)
    smooth = np.stack([np.sin(5 * x + p) * np.cos(3 * y - p) for p in phase], -1) * 80 + 128
    blob = 60 * np.exp(-((x - rng.uniform(0.2, 0.8)) ** 2 + (y - rng.uniform(0.2, 0.5)) ** 2) / 0.01)[..., None]
    return np.clip(smooth + blob + rng.normal(0, 12, (height, width, 3)), 0, 255).astype(np.uint8)

def load_processor(config: dict, folder):
    "The image processor transformers builds from a published preprocessor_config.json, as `from_pretrained` of the checkpoint does."
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "preprocessor_config.json").write_text(json.dumps(config))
    return AutoImageProcessor.from_pretrained(folder, local_files_only=True)

@pytest.fixture(scope="module")
def processors(tmp_path_factory):
    root = tmp_path_factory.mktemp("processors")
    easy = json.loads((WEIGHTS_DIR / "easy-vqa-vilt" / "processor_config.json").read_text())["image_processor"]
    return {"vilt": (load_processor(VILT_CONFIG, root / "vilt"), {}),
            "blip-384": (load_processor(BLIP_CONFIG, root / "blip"), {}),
            "blip-480": (load_processor(BLIP_CONFIG, root / "blip"), {"size": {"height": 480, "width": 480}}),  # the entry's image_kwargs
            "easy-vqa-vilt": (load_processor(easy, root / "easy"), {})}

def reference_pixels(array: np.ndarray, height: int, width: int, mean, std, crop: int | None = None) -> np.ndarray:
    "Independent transcription: PIL bicubic resize to (height, width), optional centre crop (offsets floored), x / 255, (x - mean) / std in float64; C x H x W."
    x = np.asarray(Image.fromarray(array).resize((width, height), Image.BICUBIC), np.float64) / 255
    if crop:
        top, left = (height - crop) // 2, (width - crop) // 2
        x = x[top:top + crop, left:left + crop]
    return ((x - np.array(mean)) / np.array(std)).transpose(2, 0, 1)

def assert_same(fast: dict, ref) -> None:
    "Fast-path tensors equal the processor's, element for element and in dtype."
    for key in ("pixel_values", "pixel_mask"):
        if key not in ref: continue
        assert fast[key].dtype == ref[key].dtype, (key, fast[key].dtype, ref[key].dtype)
        assert fast[key].shape == ref[key].shape, (key, fast[key].shape, ref[key].shape)
        assert torch.equal(fast[key], ref[key]), (key, (fast[key].double() - ref[key].double()).abs().max().item())

def test_real_configs_take_the_fast_path(processors):
    for name, (ip, _) in processors.items():
        # a torchvision-backend class (transformers 5 picks it when torchvision imports) would bypass the fast path and resample
        # with torchvision's bicubic, not PIL's that the checkpoints were trained and published with
        assert type(ip).__name__ in FAST_PIXELS, f"{name}: transformers built {type(ip).__name__}, not a PIL-backend processor"
    assert type(processors["vilt"][0]).__name__ in PADDING_PROCESSORS
    assert processors["vilt"][0].do_pad
    ip = processors["vilt"][0]
    assert (ip.size.shortest_edge, ip.size_divisor, int(ip.resample), tuple(ip.image_mean)) == (384, 32, 3, (0.5, 0.5, 0.5))

@pytest.mark.parametrize("name", ["vilt", "blip-384", "blip-480", "easy-vqa-vilt"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"{w}x{h}" for w, h in SHAPES])
def test_fast_path_equals_processor(processors, name, shape):
    ip, kwargs = processors[name]
    array = photo(*shape, seed=SHAPES.index(shape))
    fast = fast_pixels(ip, [array], pixel_table(ip), **kwargs)
    ref = ip([Image.fromarray(array)], return_tensors="pt", **kwargs)
    assert_same(fast, ref)
    expected = {"vilt": VILT_384_SIZES, "easy-vqa-vilt": VILT_64_SIZES}.get(name, {}).get(shape) or {"blip-384": (384, 384), "blip-480": (480, 480)}[name]
    assert tuple(fast["pixel_values"].shape[-2:]) == expected
    mean, std = ([0.5] * 3, [0.5] * 3) if "vilt" in name else (CLIP_MEAN, CLIP_STD)
    assert np.abs(fast["pixel_values"][0].double().numpy() - reference_pixels(array, *expected, mean, std)).max() < 1e-5

def test_vilt_mixed_batch_pads_to_largest(processors):
    ip, _ = processors["vilt"]
    arrays = [photo(*shape, seed=10 + i) for i, shape in enumerate(SHAPES)]
    batch = arrays + [arrays[2], arrays[0]]  # images asked twice are prepared once, then expanded
    fast = fast_pixels(ip, batch, pixel_table(ip))
    assert fast["pixel_values"].shape == (7, 3, 512, 608)
    assert fast["image_index"].tolist() == [0, 1, 2, 3, 4, 5, 6, 2, 0]
    ref = ip([Image.fromarray(a) for a in batch], return_tensors="pt")
    assert_same(to_model(fast, "cpu", torch.float32), ref)
    sides = [VILT_384_SIZES[s] for s in SHAPES]
    assert fast["pixel_mask"].sum((1, 2)).tolist() == [h * w for h, w in sides]
    assert (fast["pixel_values"][2, :, 352:, :] == 0).all()
    assert (fast["pixel_values"][1, :, :, 384:] == 0).all()  # zero padding

def test_blip_mixed_batch(processors):
    ip, kwargs = processors["blip-480"]
    batch = [photo(*shape, seed=20 + i) for i, shape in enumerate(SHAPES[:4])]
    assert_same(fast_pixels(ip, batch, pixel_table(ip), **kwargs), ip([Image.fromarray(a) for a in batch], return_tensors="pt", **kwargs))

@pytest.fixture(scope="module")
def coco_like(tmp_path_factory):
    "A grayscale ('L') and a CMYK JPEG named as COCO val2014 names them, read back through `VQADataset.load_image`."
    folder = tmp_path_factory.mktemp("val2014")
    gray = Image.fromarray(photo(640, 480, seed=30).mean(-1).astype(np.uint8), "L")
    cmyk = Image.fromarray(photo(500, 375, seed=31)).convert("CMYK")
    template = coco_image_template("val2014")
    gray.save(folder / template.format(image_id=1), quality=90)
    cmyk.save(folder / template.format(image_id=2), quality=90)
    dataset = VQADataset(pd.DataFrame({"image_id": [1, 2]}), folder, template)
    return folder, template, {"L": dataset.load_image(1), "CMYK": dataset.load_image(2)}

def test_coco_gray_and_cmyk_are_read_as_rgb(coco_like):
    folder, template, images = coco_like
    for mode, image_id in (("L", 1), ("CMYK", 2)):
        with Image.open(folder / template.format(image_id=image_id)) as raw:
            assert raw.mode == mode
            assert np.array_equal(np.asarray(images[mode]), np.asarray(raw.convert("RGB")))
        assert images[mode].mode == "RGB"
    gray = np.asarray(images["L"])
    assert (gray[..., 0] == gray[..., 1]).all()
    assert (gray[..., 1] == gray[..., 2]).all()

@pytest.mark.parametrize("name", ["vilt", "blip-480", "easy-vqa-vilt"])
def test_coco_gray_and_cmyk_fast_path(processors, coco_like, name):
    ip, kwargs = processors[name]
    images = list(coco_like[2].values())
    for batch in ([images[0]], [images[1]], images):  # each alone, and together (ViLT: 640x480 and 500x375 both 384 x 512)
        assert_same(fast_pixels(ip, batch, pixel_table(ip), **kwargs), ip(batch, return_tensors="pt", **kwargs))

# VLE: resize the shorter edge to S (the longer to int(S * long / short)), centre-crop S x S, CLIP mean and std.
# Hand-worked resize sizes at 576 (height, width) and the crop's left offset:
VLE_576_RESIZE = {(640, 480): (576, 768), (480, 640): (768, 576), (640, 360): (576, 1024), (640, 427): (576, 863),
                  (500, 375): (576, 768), (612, 612): (576, 576), (1280, 720): (576, 1024)}

@pytest.fixture(scope="module")
def vle_processors(tmp_path_factory):
    from vqa_robust.vle import VLEProcessor, write_spm_tokenizer
    out = {}
    for size in (576, 504):
        folder = tmp_path_factory.mktemp(f"vle{size}")
        write_spm_tokenizer(folder, ["what is in the picture?", "how many people are there?", "what color is the cup?"])
        (folder / "preprocessor_config.json").write_text(json.dumps(vle_config(size)))
        out[size] = VLEProcessor.from_pretrained(str(folder), local_files_only=True)
    return out

def vle_resize(shape, size):
    "VLE's resize (height, width) for a (width, height) photo, by the rule in the comment above."
    width, height = shape
    short, long = min(width, height), max(width, height)
    other = int(size * long / short)
    return (size, other) if height <= width else (other, size)

def test_vle_resize_rule_by_hand():
    assert {shape: vle_resize(shape, 576) for shape in SHAPES} == VLE_576_RESIZE
    assert vle_resize((640, 480), 504) == (504, 672)

@pytest.mark.parametrize("size", [576, 504])
def test_vle_processor(vle_processors, coco_like, size):
    processor = vle_processors[size]
    ip = processor.image_processor
    assert (ip.crop_size.height, ip.size.shortest_edge, int(ip.resample), ip.do_center_crop) == (size, size, 3, True)
    reference = load_processor(vle_config(size), coco_like[0].parent / f"clip{size}")  # the hub config straight into transformers
    arrays = [photo(*shape, seed=40 + i) for i, shape in enumerate(SHAPES)]
    images = [Image.fromarray(a) for a in arrays] + list(coco_like[2].values())
    questions = ["what is in the picture?"] * len(images)
    called = processor(images, questions)["pixel_values"]
    encoder = ProcessorEncoder(processor)  # what ClassifierVQA.encoder() gives inference
    encoded = encoder.batch(arrays + list(coco_like[2].values()), encoder.questions(questions))["pixel_values"]
    expected = reference(images, return_tensors="pt")["pixel_values"]
    assert called.shape == (len(images), 3, size, size)
    assert called.dtype == torch.float32
    assert torch.equal(called, expected)
    assert torch.equal(encoded, expected)
    for array, image, values in zip(arrays + [None, None], images, called):
        array = np.asarray(image) if array is None else array
        height, width = vle_resize(image.size, size)
        assert np.abs(values.double().numpy() - reference_pixels(array, height, width, CLIP_MEAN, CLIP_STD, crop=size)).max() < 1e-5

@pytest.mark.parametrize("name, processor", [("easy-vqa-vilt", "ViltProcessor"), ("easy-vqa-blip", "BlipProcessor")])
def test_loaders_ask_for_the_pil_backend(monkeypatch, name, processor):
    # with torchvision installed, transformers 5 builds a torchvision-backend image processor unless told otherwise: the loaders
    # must ask for PIL's, the resampling the checkpoints were published with (torchvision is not installed here, so spy on the call)
    import transformers
    from vqa_robust.zoo import load_model
    cls, seen = getattr(transformers, processor), []
    original = cls.from_pretrained.__func__
    monkeypatch.setattr(cls, "from_pretrained", classmethod(lambda c, *a, **k: seen.append(k.get("backend")) or original(c, *a, **k)))
    model = load_model(name)
    assert seen == ["pil"], seen
    assert type(model.processor.image_processor).__name__ in FAST_PIXELS
