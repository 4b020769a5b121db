"""The schemas' custom `process: kafka_compression(codec, magic[, records])` routine for the official
Kaitai compiler's Python output: copy this file next to the compiled modules."""

from kafkacodec.runtime.compression import kafka_compression_decode


class KafkaCompression:
    def __init__(self, codec, magic, records=None):
        self.codec, self.magic, self.records = codec, magic, records

    def decode(self, data):
        return kafka_compression_decode(data, self.codec, self.magic, self.records)
