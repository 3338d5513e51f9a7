"""Every module of sleuth imports on its own, first, as a user's `from sleuth.X import
Y` does: a circle of imports that only works when another module happens to be loaded
first fails here (`import sleuth.stages.results` alone once failed: normalize ->
providers -> serpapi -> verify.dates -> normalize, half loaded)."""

from __future__ import annotations

import subprocess
import sys

# In one interpreter: sleuth's modules are dropped before each import, so each is the
# first of sleuth's to load (third-party modules stay loaded: a circle is sleuth's own).
_EACH_FIRST = """
import importlib, pkgutil, sys
import sleuth
names = ["sleuth"] + [m.name for m in pkgutil.walk_packages(sleuth.__path__, "sleuth.")]
failed = []
for name in names:
    for loaded in [m for m in sys.modules if m == "sleuth" or m.startswith("sleuth.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as exc:
        failed.append(f"{name}: {exc}")
print(len(names))
print("\\n".join(failed))
"""


def test_every_module_imports_when_it_is_the_first_one_loaded() -> None:
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", _EACH_FIRST], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    count, *failed = done.stdout.splitlines()
    assert int(count) > 150  # the walk found the package's modules
    assert not [line for line in failed if line], "\n".join(failed)
