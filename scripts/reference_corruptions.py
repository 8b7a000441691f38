"""Import imagecorruptions 1.1.2 (the common ImageNet-C reference) on current numpy, scikit-image and setuptools.

It needs three shims: `pkg_resources` (gone from setuptools >= 82; used only to find its frost images),
`np.float_` (removed in numpy 2; used by fog), and `gaussian(multichannel=True)` (scikit-image >= 0.20 takes
`channel_axis=-1`; dropping the argument instead would blur across channels on >= 0.22).
Install it without its dependencies (it asks for opencv-python, which would shadow opencv-python-headless):
    pip install --no-deps imagecorruptions==1.1.2
"""
import sys, types
import numpy as np

def load_imagecorruptions():
    "The `imagecorruptions` module, shimmed to import here; ImportError if it is not installed."
    if "pkg_resources" not in sys.modules:
        try: import pkg_resources  # noqa: F401
        except ImportError:
            shim = types.ModuleType("pkg_resources"); shim.resource_filename = lambda package, path: path
            sys.modules["pkg_resources"] = shim
    if not hasattr(np, "float_"): np.float_ = np.float64
    import scipy.ndimage, skimage.filters
    sys.modules.setdefault("scipy.ndimage.interpolation", scipy.ndimage)
    original = skimage.filters.gaussian
    def gaussian(image, sigma=1, *args, multichannel=None, **kwargs):
        if multichannel: kwargs["channel_axis"] = -1
        return original(image, sigma, *args, **kwargs)
    import imagecorruptions, imagecorruptions.corruptions as functions
    functions.gaussian = gaussian
    return imagecorruptions
