"""`kafkacodec spark pack OUT.tar.gz`: the Python environment the executors need, and no more.

Executors take pyspark from their worker; what they need from Python is kafkacodec with its
columnar dependencies (numpy, pyarrow) and the codecs. This builds a fresh virtual
environment with exactly that (kafkacodec from the checkout it runs from, as a wheel, or a
wheel given with --wheel), and packs it with venv-pack, which PySpark's package management
guide names for spark.archives. venv-pack does not pack the interpreter itself: the
executors need the same Python at the same path (the same image), or use conda-pack.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import kafkacodec

from .scan import PipelineError

__all__ = ["pack", "checkout"]


def checkout() -> Path | None:
    """The source checkout kafkacodec is installed from (editable), or None."""
    root = Path(kafkacodec.__file__).resolve().parents[1]
    project = root / "pyproject.toml"
    return root if project.is_file() and 'name = "kafkacodec"' in project.read_text() else None


def _run(args: list, what: str) -> None:
    res = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if res.returncode != 0:
        raise PipelineError(f"{what} failed: {(res.stderr or res.stdout).strip()[-2000:]}")


def pack(out, *, wheel=None, python: str = sys.executable) -> dict:
    """Build and pack the executors' environment to out (a .tar.gz); returns its size and
    what it holds."""
    out = Path(out).absolute()
    if out.exists():
        raise PipelineError(f"{out}: exists already; not overwritten")
    with tempfile.TemporaryDirectory(prefix="kafkacodec-pack-") as tmp:
        tmp = Path(tmp)
        if wheel is None:
            root = checkout()
            if root is None:
                raise PipelineError("kafkacodec is not installed from a checkout: build a wheel "
                                    "(pip wheel --no-deps CHECKOUT) and pass --wheel")  # fmt: skip
            _run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", tmp / "dist", root],
                 "building the kafkacodec wheel")  # fmt: skip
            wheel = next((tmp / "dist").glob("kafkacodec-*.whl"))
        env = tmp / "env"
        _run([python, "-m", "venv", env], "creating the environment")
        _run([env / "bin" / "python", "-m", "pip", "install", "--quiet", f"{Path(wheel).absolute()}[columnar]"],
             "installing kafkacodec[columnar] into it")  # fmt: skip
        _run([python, "-m", "venv_pack", "-p", env, "-o", out], "venv-pack")
    with tarfile.open(out) as t:
        names = t.getnames()
    tops = sorted({n.split("/site-packages/", 1)[1].split("/")[0]
                   for n in names if "/site-packages/" in n})  # fmt: skip
    return {"path": str(out), "bytes": out.stat().st_size, "packages": tops}
