package main

import (
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// franz reads the bytes as franz-go's consumer reads a fetched partition: kgo's
// ProcessFetchPartition (every magic, the CRCs, kgo's default decompressor), keeping the
// control records so that they can be told apart.
func franz(data []byte) ([]Record, error) {
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.RecordBatches = data
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{KeepControlRecords: true},
		&rp, kgo.DefaultDecompressor(), nil)
	out := make([]Record, 0, len(fp.Records))
	for _, r := range fp.Records {
		rec := Record{Offset: r.Offset, Key: hexOf(r.Key), Value: hexOf(r.Value), Control: r.Attrs.IsControl()}
		// franz-go gives a magic 0 message the zero time.Time (its "no timestamp")
		if !r.Timestamp.IsZero() {
			rec.Timestamp = millis(r.Timestamp)
		}
		rec.Headers = [][2]*string{}
		for _, h := range r.Headers {
			k := javaUTF8([]byte(h.Key))
			rec.Headers = append(rec.Headers, [2]*string{&k, hexOf(h.Value)})
		}
		out = append(out, rec)
	}
	return out, fp.Err
}
