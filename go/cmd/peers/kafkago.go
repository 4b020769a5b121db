package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/segmentio/kafka-go/protocol"
	_ "github.com/segmentio/kafka-go/protocol/fetch" // registers the fetch API, as kafka.Client does
)

// kafkaGo reads the bytes as kafka-go's kafka.Client.Fetch reads a fetched partition's
// records: protocol.RecordSet.ReadFrom over the records field (its int32 size first), then
// every record of every batch.
func kafkaGo(data []byte) ([]Record, error) {
	framed := make([]byte, 4+len(data))
	binary.BigEndian.PutUint32(framed, uint32(len(data)))
	copy(framed[4:], data)
	var rs protocol.RecordSet
	if _, err := rs.ReadFrom(bytes.NewReader(framed)); err != nil {
		return nil, err
	}
	out := []Record{}
	if rs.Records == nil {
		return out, nil
	}
	var batches []protocol.RecordReader
	if stream, ok := rs.Records.(*protocol.RecordStream); ok {
		batches = stream.Records
	} else {
		batches = []protocol.RecordReader{rs.Records}
	}
	for _, batch := range batches {
		_, control := batch.(*protocol.ControlBatch)
		for {
			r, err := batch.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return out, err
			}
			rec, err := kafkaGoRecord(r, control, rs.Version)
			if err != nil {
				return out, err
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

func kafkaGoRecord(r *protocol.Record, control bool, version int8) (Record, error) {
	rec := Record{Offset: r.Offset, Control: control, Headers: [][2]*string{}}
	if !r.Time.IsZero() {
		rec.Timestamp = millis(r.Time)
	}
	var err error
	if rec.Key, err = readAll(r.Key); err != nil {
		return rec, err
	}
	if rec.Value, err = readAll(r.Value); err != nil {
		return rec, err
	}
	for _, h := range r.Headers {
		k := javaUTF8([]byte(h.Key))
		rec.Headers = append(rec.Headers, [2]*string{&k, hexOf(h.Value)})
	}
	return rec, nil
}

func readAll(b protocol.Bytes) (*string, error) {
	if b == nil {
		return nil, nil
	}
	defer b.Close()
	data, err := io.ReadAll(b)
	if err != nil {
		return nil, err
	}
	return hexOf(data), nil
}
