"""The generator's error: a schema problem, named by file and schema path."""

from kafkacodec.runtime.errors import SchemaError

__all__ = ["SchemaError"]
