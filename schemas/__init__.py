"""kafkacodec's Kaitai Struct schemas (*.ksy): the single source of every format."""
