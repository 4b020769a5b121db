"""kafkacodec: Apache Kafka's record formats, from Kaitai Struct schemas."""

from .errors import *  # noqa: F403
from .errors import __all__ as _errors_all

__version__ = "0.1.0"
__all__ = list(_errors_all)
