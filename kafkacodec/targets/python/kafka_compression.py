"""The schemas' custom `process: kafka_compression(codec, magic)` routine for the official
Kaitai compiler's Python output: copy this file next to the compiled modules."""

from kafkacodec.runtime.compression import kafka_compression_decode


class KafkaCompression:
    def __init__(self, codec, magic):
        self.codec, self.magic = codec, magic

    def decode(self, data):
        return kafka_compression_decode(data, self.codec, self.magic)
