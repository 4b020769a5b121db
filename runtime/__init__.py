"""kafkacodec.runtime: the small runtime the generated code stands on, and nothing else of
the project: errors, CRC-32 and CRC-32C, varints, the primitives generated code calls,
compression and its nesting, and the optional native extension (_speedups.c)."""
