"""kafkacodec.runtime: the small runtime the generated code stands on, and nothing else of
the project: errors, CRC-32 and CRC-32C, varints, the primitives generated code calls,
compression and its nesting, the interpreter of generated parse programs (_programs.c), and
the primitives the native extensions of the layers above include (primitives.h)."""
