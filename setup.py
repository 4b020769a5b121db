"""Only the optional native extension lives here; everything else is in pyproject.toml.

The extension is optional: when it cannot be built (no compiler), the install still
succeeds and kafkacodec uses the generated pure-Python parsers for everything.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "kafkacodec.runtime._speedups",
            sources=["runtime/_speedups.c"],
            # kafka_layout.h: the schemas' byte layout, written by the generator
            include_dirs=["generated"],
            depends=["generated/kafka_layout.h"],
            libraries=["z"],  # zlib's crc32 for legacy messages (Debian: zlib1g-dev)
            optional=True,
            extra_compile_args=["-O2", "-std=c11"],
        ),
        # the interpreter of generated parse programs (generator/programs.py)
        Extension(
            "kafkacodec.runtime._programs",
            sources=["runtime/_programs.c"],
            optional=True,
            extra_compile_args=["-O2", "-std=gnu11"],
        ),
    ]
)
