"""The Hugging Face dataset folder (vqa_robust.hf_dataset) read by the real `datasets` and `huggingface_hub` libraries,
offline: one config per condition, each decoding to the pixels `vqa-robust corrupt` (vqa_robust.generator.generate, PNG)
writes for the same questions, seed and condition; the card parsed by huggingface_hub; damage refused by name.

    pytest -q tests/test_hf_dataset.py          # about 10 s: 3 easy-VQA images, 2 corruptions x 2 severities and clean
"""

import json, shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import vqa_robust.hf_dataset as hf
from vqa_robust.generator import condition_dir, corrupted_template, generate
from vqa_robust.vqav2 import load_easy_vqa, sample_images

CORRUPTIONS, SEVERITIES, SEED = ["gaussian_noise", "defocus_blur"], [2, 4], 3
CONFIGS = ["clean", "gaussian_noise_2", "gaussian_noise_4", "defocus_blur_2", "defocus_blur_4"]


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    "The real `datasets` and `huggingface_hub`, offline (HF_DATASETS_OFFLINE, HF_HUB_OFFLINE), a temporary cache."
    patch, cache = pytest.MonkeyPatch(), tmp_path_factory.mktemp("hf_datasets_cache")
    patch.setenv("HF_DATASETS_OFFLINE", "1")
    patch.setenv("HF_HUB_OFFLINE", "1")
    patch.setenv("HF_DATASETS_CACHE", str(cache))
    import datasets, huggingface_hub.constants  # they read the variables at import: patched too, if imported before

    patch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    patch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    patch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    yield datasets, cache
    patch.undo()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    "(questions, the dataset folder, its manifest, the folder `generate` wrote for the same questions, seed and grid)."
    questions = sample_images(load_easy_vqa("test"), 3, seed=SEED)
    folder = tmp_path_factory.mktemp("export") / "hf"
    patch = pytest.MonkeyPatch()
    patch.setattr(hf, "ROWS_PER_GROUP", 10)  # several row groups a file (28 questions), as a large export has
    grid = [(c, s) for c in CORRUPTIONS for s in SEVERITIES]
    source = {"dataset": "easy_vqa", "dataset_split": "test"}
    manifest = hf.write_hf_dataset(questions, folder, grid, seed=SEED, source=source)
    patch.undo()
    generated = tmp_path_factory.mktemp("generated")
    generate(questions, generated, CORRUPTIONS, severities=SEVERITIES, seed=SEED, progress=False)
    return questions, folder, manifest, generated


def expected_pixels(questions, generated: Path, corruption: str, severity: int, image_id: int) -> np.ndarray:
    "What `vqa-robust corrupt` wrote for an image (PNG), or the dataset's own image for the clean condition."
    from PIL import Image

    if corruption == "clean":
        return np.asarray(questions.load_image(image_id).convert("RGB"))
    name = corrupted_template(questions, "png").format(image_id=image_id)
    return np.asarray(Image.open(condition_dir(generated, corruption, severity) / name).convert("RGB"))


def test_configs_are_the_conditions(offline, exported):
    datasets, _ = offline
    _, folder, manifest, _ = exported
    assert [c["name"] for c in manifest["conditions"]] == CONFIGS
    assert datasets.get_dataset_config_names(str(folder)) == CONFIGS  # what `datasets` reads from the card
    assert datasets.get_dataset_default_config_name(str(folder)) == "clean"
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted(CONFIGS)


def test_every_config_loads_with_the_generators_pixels(offline, exported):
    datasets, cache = offline
    questions, folder, manifest, generated = exported
    card = hf.card_front_matter(folder / hf.CARD)
    for condition, info in zip(manifest["conditions"], card["dataset_info"]):
        rows = datasets.load_dataset(str(folder), name=condition["name"], split="test", cache_dir=str(cache))
        assert len(rows) == len(questions.questions) == condition["rows"]
        assert isinstance(rows.features["image"], datasets.Image)
        assert rows.features == datasets.Features._from_yaml_list(info["features"])
        assert rows.info.splits["test"].num_bytes == info["splits"][0]["num_bytes"]  # the card's, as datasets counts
        assert rows["question_id"] == questions.questions.question_id.tolist()
        assert rows["answers"] == questions.questions.answers.map(list).tolist()  # the dataset's reference answers
        assert set(rows["corruption"]) == {condition["corruption"]}
        assert set(rows["severity"]) == {condition["severity"]}
        for row in rows:
            image = np.asarray(row["image"].convert("RGB"))  # a PIL image, decoded by datasets
            c, s = condition["corruption"], condition["severity"]
            expected = expected_pixels(questions, generated, c, s, row["image_id"])
            assert np.array_equal(image, expected), (condition["name"], row["image_id"])
    noisy = expected_pixels(questions, generated, "gaussian_noise", 4, questions.image_ids[0])
    assert not np.array_equal(noisy, expected_pixels(questions, generated, "clean", 0, questions.image_ids[0]))


def test_parquet_metadata_declares_the_features_alone(offline, exported):
    "A Parquet file loaded without the card (`load_dataset('parquet')`): its schema's metadata decodes the images."
    datasets, cache = offline
    _, folder, manifest, _ = exported
    path = folder / next(iter(manifest["conditions"][1]["files"]))
    assert pq.ParquetFile(path).num_row_groups == 3  # 25 rows, 10 a group (the fixture's ROWS_PER_GROUP)
    rows = datasets.load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(cache))
    assert isinstance(rows.features["image"], datasets.Image)
    assert rows.features == datasets.Features.from_dict({c: hf.HF_COLUMNS[c].feature for c in manifest["columns"]})
    declared = datasets.Features.from_dict({c: hf.HF_COLUMNS[c].feature for c in hf.HF_COLUMNS})
    written = hf.hf_schema(list(hf.HF_COLUMNS)).remove_metadata()
    assert declared.arrow_schema.remove_metadata() == written  # the Arrow types datasets expects: no cast
    yaml_declared = datasets.Features._from_yaml_list([{"name": c, **col.card} for c, col in hf.HF_COLUMNS.items()])
    assert yaml_declared == declared  # the card and the Parquet metadata declare the same features


def test_card_parses_with_huggingface_hub(offline, exported):
    from huggingface_hub import DatasetCard, DatasetCardData

    _, folder, manifest, _ = exported
    card = DatasetCard.load(folder / hf.CARD)
    assert isinstance(card.data, DatasetCardData)
    assert card.data.license == "mit"
    assert card.data.task_categories == ["visual-question-answering"]
    assert card.data.pretty_name.startswith("easy_vqa_test under image corruptions")
    assert [c["config_name"] for c in card.data.configs] == CONFIGS
    rows = [i["splits"][0]["num_examples"] for i in card.data.dataset_info]
    assert rows == [len(manifest["question_ids"])] * len(CONFIGS)
    assert DatasetCardData(**card.data.to_dict()).to_dict() == card.data.to_dict()
    assert manifest["group"] in card.text  # the body names the export
    assert hf.check_hf_dataset(folder) == manifest


def damaged_copy(folder: Path, tmp_path: Path, change) -> Path:
    copy = tmp_path / "hf"
    shutil.copytree(folder, copy)
    change(copy)
    return copy


def test_corrupted_manifest_is_refused_by_name(exported, tmp_path):
    questions, folder, _, _ = exported
    copy = damaged_copy(folder, tmp_path, lambda d: (d / hf.HF_MANIFEST).write_text('{"conditions": [}'))
    with pytest.raises(ValueError, match=f"{copy / hf.HF_MANIFEST}: not a manifest"):
        hf.check_hf_dataset(copy)
    with pytest.raises(ValueError, match=f"{copy / hf.HF_MANIFEST}: not a manifest"):  # nor is it replaced blindly
        hf.write_hf_dataset(questions, copy, [("gaussian_noise", 2)], seed=SEED)


def test_missing_config_folder_is_refused_by_name(exported, tmp_path):
    _, folder, _, _ = exported
    copy = damaged_copy(folder, tmp_path, lambda d: shutil.rmtree(d / "defocus_blur_4"))
    with pytest.raises(ValueError, match=f"{copy / 'defocus_blur_4'}: config defocus_blur_4's folder is missing"):
        hf.check_hf_dataset(copy)


def test_edited_manifest_entry_is_refused_by_name(exported, tmp_path):
    _, folder, _, _ = exported

    def swap_digest(d: Path) -> None:
        manifest = json.loads((d / hf.HF_MANIFEST).read_text())
        manifest["conditions"][2]["files"] = manifest["conditions"][1]["files"]  # another config's file and sha256
        (d / hf.HF_MANIFEST).write_text(json.dumps(manifest))

    copy = damaged_copy(folder, tmp_path, swap_digest)
    with pytest.raises(ValueError, match=f"{copy / 'README.md'}: its configs are not hf_dataset.json's"):
        hf.check_hf_dataset(copy)
