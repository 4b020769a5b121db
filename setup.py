"""Only the optional native extension lives here; everything else is in pyproject.toml.

The extension is optional: when it cannot be built (no compiler), the install still
succeeds and kafkacodec uses the generated pure-Python parsers for everything.
"""

import glob
import os

from setuptools import Extension, setup

# Intel ISA-L's CRC-32 (Debian's libisal-dev, which the Makefile installs) for legacy
# messages when its header is there; zlib's otherwise (the same values, about 6x slower on
# a short message).
ISAL = os.path.exists("/usr/include/isa-l/crc.h") and not os.environ.get("KAFKACODEC_NO_ISAL")

setup(
    ext_modules=[
        # the records layer's loops (decode, walk, columns, encode, text), one file per
        # concern; the runtime's primitives are headers (runtime/primitives.h, pyobjects.h)
        Extension(
            "kafkacodec.records._native",
            sources=sorted(glob.glob("kafkacodec/records/_native_*.c")),
            # kafka_layout.h: the schemas' byte layout, written by the generator
            include_dirs=["kafkacodec/records", "runtime", "generated"],
            depends=["generated/kafka_layout.h", "kafkacodec/records/_native.h",
                     "runtime/primitives.h", "runtime/pyobjects.h"],
            libraries=["isal"] if ISAL else ["z"],  # Debian's libisal-dev, else zlib1g-dev
            define_macros=[("KAFKACODEC_ISAL", "1")] if ISAL else [],
            optional=True,
            # only PyInit is seen from outside the module's files
            extra_compile_args=["-O2", "-std=c11", "-fvisibility=hidden"],
        ),
        # the interpreter of generated parse programs (generator/programs.py)
        Extension(
            "kafkacodec.runtime._programs",
            sources=["runtime/_programs.c"],
            include_dirs=["runtime"],
            depends=["runtime/pyobjects.h"],
            optional=True,
            extra_compile_args=["-O2", "-std=gnu11"],
        ),
        # the internal topics' loops: Kafka's JSON of their structs (kafka_json.py's plans,
        # walked in C), the fold of a coordinator topic's newest record per key, and the
        # metadata fold's runs of partition changes
        Extension(
            "kafkacodec.internal._native",
            sources=sorted(glob.glob("kafkacodec/internal/_native_*.c")),
            include_dirs=["kafkacodec/internal", "runtime"],
            depends=["kafkacodec/internal/_native.h", "runtime/pyobjects.h"],
            optional=True,
            extra_compile_args=["-O2", "-std=c11", "-fvisibility=hidden"],
        ),
    ]
)
