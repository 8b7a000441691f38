"""Package build for vqa_robust: reads nbdev's settings.ini (no pkg_resources, which current setuptools lacks)."""
from configparser import ConfigParser
from pathlib import Path
import setuptools

here = Path(__file__).parent
config = ConfigParser(delimiters=["="])
config.read(here / "settings.ini", encoding="utf-8")
cfg = config["DEFAULT"]

licenses = {"apache2": ("Apache Software License 2.0", "OSI Approved :: Apache Software License")}
statuses = ["1 - Planning", "2 - Pre-Alpha", "3 - Alpha", "4 - Beta", "5 - Production/Stable", "6 - Mature", "7 - Inactive"]
lic = licenses[cfg["license"]]
min_python = cfg["min_python"]

setuptools.setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=(here / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    license=lic[0],
    url=cfg["git_url"],
    keywords=cfg["keywords"].split(),
    classifiers=[
        "Development Status :: " + statuses[int(cfg["status"])],
        "Intended Audience :: Science/Research",
        "License :: " + lic[1],
        "Natural Language :: " + cfg["language"],
        "Programming Language :: Python :: 3",
    ],
    packages=setuptools.find_packages(include=[cfg["lib_name"], cfg["lib_name"] + ".*"]),
    package_data={cfg["lib_name"]: cfg.get("package_data", "").split()},
    include_package_data=True,
    python_requires=">=" + min_python,
    install_requires=cfg.get("requirements", "").split(),
    extras_require={"dev": cfg.get("dev_requirements", "").split()},
    zip_safe=False,
    entry_points={"nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"],
                  "console_scripts": cfg.get("console_scripts", "").split()},  # vqa-robust=vqa_robust.cli:main
)
