"""What the LAVIS drivers change around LAVIS 1.0.2 (never LAVIS itself), imported first by `blip_driver.py` and `pnp_driver.py`:
(1) skip LAVIS's package `__init__`s, which import every dataset, model and processor LAVIS has, by registering empty parent
packages; (2) skip torchvision's registration of its compiled detection operators (the only torchvision wheel here is built for
CUDA torch; BLIP and PNP-VQA need none of them); (3) point `BertTokenizer.from_pretrained("bert-base-uncased")` at a local vocabulary."""
import importlib.util, os, sys, types
from pathlib import Path


def skip_package_inits(*subpackages: str):
    "Register `lavis` and `lavis.<sub>` as empty packages over LAVIS's folders, with the base classes LAVIS's registry decorators import from them."
    sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")
    root = os.path.dirname(importlib.util.find_spec("lavis").origin)
    for name, sub in [("lavis", ""), *((f"lavis.{s}", s) for s in subpackages)]:
        module = types.ModuleType(name); module.__path__ = [os.path.join(root, sub)]; sys.modules[name] = module
    if "models" in subpackages:
        from lavis.models.base_model import BaseModel
        sys.modules["lavis.models"].BaseModel = BaseModel
    if "processors" in subpackages:
        from lavis.processors.base_processor import BaseProcessor
        sys.modules["lavis.processors"].BaseProcessor = BaseProcessor


def local_bert_vocabulary(folder: Path, tokens: list[str]):
    "Write `tokens` as a BERT vocab.txt in `folder` and make LAVIS's 'bert-base-uncased' tokenizer read it (no hub download)."
    import transformers
    import lavis.models.blip_models.blip as lavis_blip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(tokens) + "\n")

    class LocalBertTokenizer(transformers.BertTokenizer):
        "BertTokenizer whose 'bert-base-uncased' is the tiny local vocabulary."
        @classmethod
        def from_pretrained(cls, name, *args, **kwargs):
            return super().from_pretrained(str(folder) if name == "bert-base-uncased" else name, *args, **kwargs)
    lavis_blip.BertTokenizer = LocalBertTokenizer
    return LocalBertTokenizer
