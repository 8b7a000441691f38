"The generator as users import it: its notebook's namespace holds more names than the module, so a missing import shows only here."
import numpy as np

def test_corrupted_dataset_from_the_module(tmp_path):
    from vqa_robust.vqav2 import load_easy_vqa, sample_images
    from vqa_robust.generator import generate, corrupted_dataset
    from vqa_robust.corruptions import image_under_condition
    ds = sample_images(load_easy_vqa("test"), 2, seed=0)
    generate(ds, tmp_path, ["brightness"], severities=(2,), seed=1, progress=False)
    on_disk = corrupted_dataset(ds, tmp_path, "brightness", 2)
    i = ds.image_ids[0]
    assert on_disk.name == f"{ds.name}/brightness/2"
    np.testing.assert_array_equal(np.asarray(on_disk.load_image(i)), image_under_condition(ds.load_image(i), "brightness", 2, 1, i))
