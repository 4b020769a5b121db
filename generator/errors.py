"""The generator's errors: a schema problem, named by file and schema path; a generator that
could not run (a tool is missing, or output does not compile)."""

from kafkacodec.runtime.errors import KafkacodecError, SchemaError

__all__ = ["SchemaError", "GenerateError"]


class GenerateError(KafkacodecError):
    """The generator could not run (a tool is missing, or output does not compile)."""
