package kafkacodec_test

import (
	"fmt"
	"os"

	"github.com/kafkacodec/kafkacodec/go/kafkacodec"
)

// A log segment (or a fetched record set): its batches, their CRCs checked and their
// records decompressed.
func ExampleParseKafkaLog() {
	data, err := os.ReadFile("../../tests/vectors/kafka-java/v2/v2_gzip_basic.bin")
	if err != nil {
		panic(err)
	}
	log, err := kafkacodec.ParseKafkaLog(data, true)
	if err != nil {
		panic(err)
	}
	for _, entry := range log.Entries {
		batch, ok := entry.Body.(*kafkacodec.KafkaRecordBatch)
		if !ok {
			continue // a legacy message (magic 0 or 1), or the partial entry that ends a log
		}
		fmt.Println("codec", batch.Compression(), "records", len(batch.RecordsRegion.Records))
		for _, r := range batch.RecordsRegion.Records[:2] {
			fmt.Printf("%d %d %q %q\n", batch.BaseOffset+r.OffsetDelta, batch.BaseTimestamp+r.TimestampDelta, r.Key, r.Value)
		}
	}
	// Output:
	// codec 1 records 3
	// 0 1700000000000 "k1" "v1"
	// 1 1700000000010 "key-2" "value-two"
}
