"""The generator's error: a schema problem, named by file and schema path."""

from kafkacodec.errors import SchemaError

__all__ = ["SchemaError"]
