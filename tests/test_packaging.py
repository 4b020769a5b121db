"""What a plain install needs: the runtime, the record API, the log layer and the command
line work without the generator's dependencies (jinja2, pyyaml), without hypothesis and
without pyspark."""

import subprocess
import sys
import zipfile

import pytest
from conftest import ROOT, checkout_modules

BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jinja2", "yaml", "hypothesis", "pyspark"):
            raise ImportError(f"{name} is not installed (blocked by the test)")
sys.meta_path.insert(0, Block())
"""


def test_a_plain_install_needs_no_generator_and_no_hypothesis(tmp_path):
    code = (
        BLOCK
        + f"""
import kafkacodec, kafkacodec.log, kafkacodec.cli
from kafkacodec.sample import write_sample_log_dirs
root = write_sample_log_dirs({str(tmp_path / "logs")!r}, batches=20)
assert kafkacodec.cli.main(["verify", "--quiet", str(root)]) == 0
assert kafkacodec.cli.main(["generate", "--check"]) == 2  # names the extra it needs
assert kafkacodec.cli.main(["spark", "verify", str(root)]) == 1  # names the pipeline extra
print("ok", sorted(m for m in ("jinja2", "yaml", "hypothesis", "pyspark") if m in sys.modules))
"""
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok []")
    assert "pip install 'kafkacodec[generator]'" in out.stderr
    assert "pip install 'kafkacodec[pipeline]'" in out.stderr


@pytest.mark.slow
def test_the_wheel_holds_the_modules_of_the_checkout_under_the_same_names(tmp_path):
    """Every module path says its import name, the same in the wheel and in the checkout."""
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w",
                          str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    (wheel,) = tmp_path.glob("kafkacodec-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    modules = set()
    for name in names:
        if name.endswith(".py") and name.startswith("kafkacodec/") and "/targets/" not in name:
            parts = name[: -len(".py")].split("/")
            modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert modules == checkout_modules()
    assert any(n.startswith("kafkacodec/records/_native.") and n.endswith(".so") for n in names)
    assert "kafkacodec/py.typed" in names
    from kafkacodec.pipeline import JAR

    if JAR.is_file():  # built (make jar): the Spark format's JVM reader travels with the package
        assert "kafkacodec/pipeline/jars/kafkacodec-spark.jar" in names
