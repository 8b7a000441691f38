"""Guard torchvision's unguarded fake-kernel registrations in the venv that runs this script.

PyPI's torchvision 0.28.0 is a CUDA build whose compiled ops do not match a CPU torch 2.13.0: its two unguarded
`@torch.library.register_fake("torchvision::...")` decorators fail at import (`operator torchvision::nms does not exist`).
Each becomes a no-op where the op is absent, so the pure-Python transforms import. Side environments run it with their own
interpreter: `V/bin/python scripts/guard_torchvision.py NAME` (NAME prefixes what it prints).
"""
import pathlib, re, sys, sysconfig

UNGUARDED = re.compile(r"^@torch\.library\.register_fake\((.+?)\)\n", re.M)
GUARDED = r"@(lambda f: f) if not hasattr(torch.ops.torchvision, \1.split('::')[-1]) else torch.library.register_fake(\1)\n"

def guard(site: pathlib.Path, name: str) -> int:
    "Rewrite every unguarded registration under site/torchvision; how many files changed."
    changed = 0
    for path in (site / "torchvision").rglob("*.py"):
        text = path.read_text()
        fixed = UNGUARDED.sub(GUARDED, text)
        if fixed != text:
            path.write_text(fixed)
            changed += 1
            print(f"{name}: guarded register_fake in {path.relative_to(site)}")
    return changed

if __name__ == "__main__":
    guard(pathlib.Path(sysconfig.get_paths()["purelib"]), sys.argv[1] if len(sys.argv) > 1 else "guard_torchvision")
