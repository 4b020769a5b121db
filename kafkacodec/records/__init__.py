"""kafkacodec.records: the record API over the generated codecs: batches of every magic
and their records (batches), builders (builders), and Arrow columns (columnar)."""
