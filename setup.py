"""Only the optional native extension lives here; everything else is in pyproject.toml.

The extension is optional: when it cannot be built (no compiler), the install still
succeeds and kafkacodec uses the generated pure-Python parsers for everything.
"""

import os

from setuptools import Extension, setup

# Intel ISA-L's CRC-32 (Debian's libisal-dev, which the Makefile installs) for legacy
# messages when its header is there; zlib's otherwise (the same values, about 6x slower on
# a short message).
ISAL = os.path.exists("/usr/include/isa-l/crc.h") and not os.environ.get("KAFKACODEC_NO_ISAL")

setup(
    ext_modules=[
        Extension(
            "kafkacodec.runtime._speedups",
            sources=["runtime/_speedups.c"],
            # kafka_layout.h: the schemas' byte layout, written by the generator
            include_dirs=["generated"],
            depends=["generated/kafka_layout.h"],
            libraries=["isal"] if ISAL else ["z"],  # Debian's libisal-dev, else zlib1g-dev
            define_macros=[("KAFKACODEC_ISAL", "1")] if ISAL else [],
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
